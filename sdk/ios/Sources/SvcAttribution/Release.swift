// What a release sets: scripts/release.sh writes the deployment's URL into `defaultEndpoint` on the
// tagged commit only (as `npm pack` does for the React Native package), so main keeps the local one.
enum Release {
    static let version = "0.1.0"
    static let defaultEndpoint = "http://127.0.0.1:3000"
}
