#!/usr/bin/env bash
# Tags a release of the Swift package SvcAttribution for one deployment.
#
#   sdk/ios/scripts/release.sh VERSION ENDPOINT      e.g. sdk/ios/scripts/release.sh 0.1.0 https://svc.example.com
#
# SwiftPM has no build step to inject the deployment's URL (as `npm pack` does for the React Native
# package), so the tag points at a commit of its own, off every branch, whose Release.swift holds
# ENDPOINT; the branch keeps the local default. Bump Release.version (with the CHANGELOG) on the
# branch first, by a normal commit. The script only tags locally: it prints the push to run.
set -euo pipefail

usage() {
    echo "usage: sdk/ios/scripts/release.sh VERSION ENDPOINT   (e.g. 0.1.0 https://svc.example.com)" >&2
    exit 2
}
fail() {
    echo "release.sh: $*" >&2
    exit 1
}

[[ $# -eq 2 ]] || usage
version=$1
endpoint=$2

# The tag is what SwiftPM resolves `from: "0.1.0"` against: plain MAJOR.MINOR.PATCH, since `from:`
# skips pre-release tags (0.2.0-rc.1) and one spelling keeps every release's tag findable.
[[ $version =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$ ]] ||
    fail "VERSION must be MAJOR.MINOR.PATCH (e.g. 0.1.0), not '$version'"

# Without trailing slashes, as the React Native build writes PUBLIC_BASE_URL: Svc.defaultEndpoint shows one form.
while [[ $endpoint == */ ]]; do endpoint=${endpoint%/}; done
# A base URL only (no query, fragment or credentials), and nothing that would need escaping inside
# the Swift string literal it is written into.
url_pattern='^https?://([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?(/[-A-Za-z0-9._~%/!$&()*+,;=:@]*)?$'
[[ $endpoint =~ $url_pattern ]] ||
    fail "ENDPOINT must be an http:// or https:// base URL (e.g. https://svc.example.com), not '$2'"

# Works from any directory: everything below is relative to the repository root.
cd "$(dirname "$0")"
cd "$(git rev-parse --show-toplevel)"
release_file=sdk/ios/Sources/SvcAttribution/Release.swift
[[ -f $release_file ]] || fail "$release_file not found"

# Untracked files count too: a new source file not yet added would be missing from the tag.
[[ -z $(git status --porcelain) ]] || fail "the work tree has changes; commit or stash them first:
$(git status --short)"

current_version=$(sed -n 's/^[[:space:]]*static let version = "\([^"]*\)".*$/\1/p' "$release_file")
[[ $current_version == "$version" ]] ||
    fail "Release.version in $release_file is '$current_version', not '$version': bump it (and the CHANGELOG) on the branch first, by a normal commit"

if git rev-parse --quiet --verify "refs/tags/$version" >/dev/null; then fail "tag $version already exists"; fi

# Where to come back to: the branch, or the commit when HEAD was already detached.
original=$(git symbolic-ref --quiet --short HEAD || git rev-parse HEAD)

# Rewrites the defaultEndpoint line only, keeping its indentation. awk reads ENDPOINT from the
# environment, so no character of the URL is taken as a pattern or an escape.
rewritten=$(ENDPOINT=$endpoint awk '
    /^[[:space:]]*static let defaultEndpoint = "[^"]*"[[:space:]]*$/ {
        match($0, /^[[:space:]]*/)
        print substr($0, 1, RLENGTH) "static let defaultEndpoint = \"" ENVIRON["ENDPOINT"] "\""
        found++
        next
    }
    { print }
    END { if (found != 1) exit 1 }
' "$release_file") || fail "$release_file must hold exactly one line 'static let defaultEndpoint = \"...\"'"
[[ $rewritten != "$(cat "$release_file")" ]] || fail "defaultEndpoint is already $endpoint; nothing to release"

restore() {
    # Drops this script's edit (the tree was clean before), then goes back, so neither a failed
    # step nor Ctrl-C leaves the user on the detached commit or with a changed Release.swift.
    git checkout --quiet HEAD -- "$release_file" || true
    git checkout --quiet "$original" || { echo "release.sh: could not go back to $original; run: git checkout $original" >&2; return 1; }
}
trap restore EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Detached, so the branch does not move: the release commit lives on the tag only.
git checkout --quiet --detach
printf '%s\n' "$rewritten" >"$release_file"
[[ $(git diff --numstat) == $'1\t1\t'"$release_file" ]] || fail "unexpected change: $(git diff)"
message="SvcAttribution $version for $endpoint"
git commit --quiet -m "$message" -- "$release_file"
git tag --annotate -m "$message" "$version"
commit=$(git rev-parse HEAD)

trap - EXIT INT TERM
restore

echo "Tagged $version at $commit ($message)."
echo "$original is unchanged. To publish the release:"
echo "    git push origin $version"
