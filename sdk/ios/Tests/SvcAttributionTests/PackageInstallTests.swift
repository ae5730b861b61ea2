// Needs Process, and a shell for release.sh: not on iOS, tvOS or watchOS (Xcode may build the tests for them).
#if os(macOS) || os(Linux)
import Foundation
import Testing

/// The package as an app gets it: Xcode's "Add Package Dependencies" with the repository's URL and
/// "Up to Next Major Version from 0.1.0", i.e. `.package(url:from:)`, resolved against a tag that
/// release.sh made. It installs what is committed (a clone of HEAD), on purpose: a source file git
/// does not know of, or a script committed without its execute bit, fails here before a user sees it.
@Suite("Package install")
struct PackageInstallTests {
    /// Where the release tag points the app; any deployment's URL would do.
    static let releaseEndpoint = "https://svc.example.com"

    @Test("an app's `from: \"0.1.0\"` resolves to the tag release.sh makes, which holds the deployment's endpoint; the repository stays as it was",
          Self.timeLimitIfAvailable(minutes: 10))
    func installFromReleaseTag() async throws {
        var git = try Tool.find("git")
        var swift = try Tool.find("swift", alsoIn: ["/opt/swift/usr/bin"])

        let testDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let repository = URL(fileURLWithPath: try await git.line(["rev-parse", "--show-toplevel"], in: testDirectory))
        let before = try await RepositoryState(of: repository, git: git)

        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("svc-install-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temporary) }
        // SwiftPM leaves its lock files in TMPDIR: in this directory, they go with it.
        let scratchTMPDIR = temporary.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: scratchTMPDIR, withIntermediateDirectories: true)
        git.environment["TMPDIR"] = scratchTMPDIR.path
        swift.environment["TMPDIR"] = scratchTMPDIR.path

        // The release, made in a clone: the real repository's branches and tags are not the test's to move.
        // The directory's name is what SwiftPM derives the package's identity from, as from a URL's.
        let clone = temporary.appendingPathComponent("SvcAttribution")
        try await git.run(["clone", "--quiet", repository.path, clone.path], in: temporary)
        let script = clone.appendingPathComponent("sdk/ios/scripts/release.sh")
        try #require(FileManager.default.fileExists(atPath: script.path),
                     "sdk/ios/scripts/release.sh is not in HEAD: this test installs what is committed, so commit it first")
        let version = try releaseVersion(in: clone)
        // The user's global settings must not sign (a passphrase prompt) nor run hooks in the clone.
        for setting in [["user.name", "Package install test"], ["user.email", "package-install-test@example.com"],
                        ["commit.gpgSign", "false"], ["tag.gpgSign", "false"], ["core.hooksPath", "/dev/null"]] {
            try await git.run(["config", "--local"] + setting, in: clone)
        }
        // The real repository may hold this version's tag already, at an older commit; clone copied it.
        if try await !git.line(["tag", "--list", version], in: clone).isEmpty {
            try await git.run(["tag", "--delete", version], in: clone)
        }
        let cloneHead = try await git.line(["rev-parse", "HEAD"], in: clone)
        // The clone's own branch: a CI checkout on a detached commit clones onto a branch.
        let cloneBranch = try await git.line(["rev-parse", "--abbrev-ref", "HEAD"], in: clone)
        // Run as a user runs it (its execute bit and shebang included), from outside the repository.
        let released = try await Tool(path: script, environment: git.environment).run([version, Self.releaseEndpoint + "/"], in: temporary)
        let tagged = try await git.line(["rev-parse", "\(version)^{commit}"], in: clone)
        #expect(released.contains("git push origin \(version)"), "release.sh: \(released)")
        #expect(try await git.line(["cat-file", "-t", version], in: clone) == "tag", "not an annotated tag")
        #expect(try await git.line(["log", "-1", "--format=%s", tagged], in: clone) == "SvcAttribution \(version) for \(Self.releaseEndpoint)")
        #expect(try await git.line(["diff", "--name-only", cloneHead, tagged], in: clone) == "sdk/ios/Sources/SvcAttribution/Release.swift")
        #expect(try await git.line(["rev-parse", "HEAD"], in: clone) == cloneHead, "release.sh moved the branch")
        #expect(try await git.run(["status", "--porcelain"], in: clone).isEmpty, "release.sh left changes")
        #expect(try await git.line(["rev-parse", "--abbrev-ref", "HEAD"], in: clone) == cloneBranch,
                "release.sh did not go back to the branch")

        // The app: a package of its own, as an Xcode project's dependency resolves.
        let app = temporary.appendingPathComponent("App")
        let identity = clone.lastPathComponent.lowercased()
        try writeApp(at: app, dependency: URL(fileURLWithPath: clone.path, isDirectory: false).absoluteString, identity: identity)
        // SwiftPM's caches, configuration (mirrors) and fingerprints go in the temporary directory too:
        // nothing of the user's changes what resolves, and nothing of this run stays behind.
        let swiftPM = temporary.appendingPathComponent("swiftpm")
        let options = ["--package-path", app.path, "--scratch-path", temporary.appendingPathComponent("build").path,
                       "--cache-path", swiftPM.appendingPathComponent("cache").path,
                       "--config-path", swiftPM.appendingPathComponent("configuration").path,
                       "--security-path", swiftPM.appendingPathComponent("security").path]
        try await swift.run(["build"] + options, in: temporary)
        // The last line: anything SwiftPM says first (a resolution notice) comes before the path.
        let binPath = try await swift.run(["build", "--show-bin-path"] + options, in: temporary)
            .split(separator: "\n").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let output = try await Tool(path: URL(fileURLWithPath: binPath).appendingPathComponent("InstallCheck"), environment: swift.environment)
            .run([], in: temporary)

        let printed = Dictionary(output.split(separator: "\n").compactMap { line -> (String, String)? in
            guard let equals = line.firstIndex(of: "=") else { return nil }
            return (String(line[..<equals]), String(line[line.index(after: equals)...]))
        }, uniquingKeysWith: { first, _ in first })
        #expect(printed["sdkVersion"] == version, "app printed: \(output)")
        #expect(printed["defaultEndpoint"] == Self.releaseEndpoint, "app printed: \(output)")
        #expect(printed["installIDIsLowercaseUUID"] == "true", "app printed: \(output)")

        // The version resolved is the tag, at release.sh's commit (not main's).
        let resolvedFile = app.appendingPathComponent("Package.resolved")
        let resolved = try String(contentsOf: resolvedFile, encoding: .utf8)
        let pins = (try JSONSerialization.jsonObject(with: Data(resolved.utf8)) as? [String: Any])?["pins"] as? [[String: Any]]
        let pin = try #require(pins?.first { $0["identity"] as? String == identity }, "Package.resolved: \(resolved)")
        let state = pin["state"] as? [String: Any]
        #expect(state?["version"] as? String == version, "Package.resolved: \(resolved)")
        #expect(state?["revision"] as? String == tagged, "Package.resolved: \(resolved)")
        #expect(tagged != cloneHead)

        let after = try await RepositoryState(of: repository, git: git)
        #expect(after == before, "the repository itself changed")
    }

    /// `Release.version` as the clone's Release.swift spells it.
    private func releaseVersion(in clone: URL) throws -> String {
        let file = clone.appendingPathComponent("sdk/ios/Sources/SvcAttribution/Release.swift")
        let source = try String(contentsOf: file, encoding: .utf8)
        let line = source.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("static let version = \"") }
        let parts = line?.split(separator: "\"", omittingEmptySubsequences: false)
        return try #require(parts.flatMap { $0.count == 3 ? String($0[1]) : nil }, "no `static let version = \"…\"` in \(file.path)")
    }

    /// An executable package depending on SvcAttribution as an app does: public API only, no @testable.
    private func writeApp(at app: URL, dependency: String, identity: String) throws {
        let sources = app.appendingPathComponent("Sources/InstallCheck")
        try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
        try """
        // swift-tools-version:6.0
        import PackageDescription

        let package = Package(
            name: "InstallCheck",
            platforms: [.iOS(.v15), .macOS(.v12)],
            dependencies: [
                .package(url: "\(dependency)", from: "0.1.0"),
            ],
            targets: [
                .executableTarget(
                    name: "InstallCheck",
                    dependencies: [.product(name: "SvcAttribution", package: "\(identity)")],
                    // An app in Swift 6 mode must use the public API without a warning.
                    swiftSettings: [.unsafeFlags(["-warnings-as-errors"])]
                ),
            ]
        )

        """.write(to: app.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try """
        import Foundation
        import SvcAttribution

        /// The app's own storage: any type may conform to the public protocol.
        final class AppStorage: SvcStorage, @unchecked Sendable {
            private let lock = NSLock()
            private var values: [String: String] = [:]

            func string(forKey key: String) throws -> String? {
                lock.lock()
                defer { lock.unlock() }
                return values[key]
            }

            func set(_ value: String, forKey key: String) throws {
                lock.lock()
                defer { lock.unlock() }
                values[key] = value
            }
        }

        let client = Svc.makeClient(pixelKey: "pk_install_check", endpoint: nil, sandbox: false,
                                    storage: AppStorage(), clipboard: nil,
                                    log: { message, error in print("log=\\(message) \\(error.map { "\\($0)" } ?? "")") })
        let installID = await client.installID()
        print("sdkVersion=\\(Svc.sdkVersion)")
        print("defaultEndpoint=\\(Svc.defaultEndpoint?.absoluteString ?? "nil")")
        print("installIDIsLowercaseUUID=\\(UUID(uuidString: installID) != nil && installID == installID.lowercased())")

        """.write(to: sources.appendingPathComponent("main.swift"), atomically: true, encoding: .utf8)
    }
}

// Nested, so that no helper's name meets another test file's in this module.
extension PackageInstallTests {
    /// `.timeLimit(.minutes(minutes))` where the Clock API is (macOS 13 on, above the package's macOS 12);
    /// a function, since the @Test macro does not guard traits by the test's @available (rdar://127811571).
    private static func timeLimitIfAvailable(minutes: UInt64) -> any TestTrait {
        guard #available(macOS 13.0, *) else { return Comment(rawValue: "no time limit before macOS 13") }
        return .timeLimit(.minutes(minutes))
    }

    /// What the test must leave as it found it in the real repository.
    private struct RepositoryState: Equatable {
        let head: String
        /// The branch, or "HEAD" when detached.
        let branch: String
        let tags: String
        let releaseSwift: String

        init(of repository: URL, git: Tool) async throws {
            head = try await git.line(["rev-parse", "HEAD"], in: repository)
            branch = try await git.line(["rev-parse", "--abbrev-ref", "HEAD"], in: repository)
            tags = try await git.run(["for-each-ref", "--format=%(refname) %(objectname)", "refs/tags"], in: repository)
            releaseSwift = try String(contentsOf: repository.appendingPathComponent("sdk/ios/Sources/SvcAttribution/Release.swift"), encoding: .utf8)
        }
    }

    /// A program the test runs, with its output captured.
    private struct Tool: Sendable {
        let path: URL
        var environment = Tool.cleanEnvironment

        /// The program `name` on PATH, or else in one of `directories`.
        static func find(_ name: String, alsoIn directories: [String] = []) throws -> Tool {
            let path = ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":").map(String.init) ?? []
            for directory in path + directories {
                let candidate = URL(fileURLWithPath: directory).appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return Tool(path: candidate) }
            }
            throw ToolFailure(description: "\(name) not found on PATH (\(path.joined(separator: ":")))\(directories.isEmpty ? "" : " nor in \(directories.joined(separator: ", "))")")
        }

        /// What the program printed, trimmed: one line, for git's answers.
        func line(_ arguments: [String], in directory: URL) async throws -> String {
            try await run(arguments, in: directory).trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Runs the program in `directory` and answers what it printed (stdout and stderr together);
        /// throws, with that output, when it fails.
        @discardableResult
        func run(_ arguments: [String], in directory: URL) async throws -> String {
            let process = Process()
            process.executableURL = path
            process.arguments = arguments
            process.currentDirectoryURL = directory
            process.environment = environment
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            process.standardInput = FileHandle.nullDevice
            let command = ([path.path] + arguments).joined(separator: " ")
            do {
                try process.run()
            } catch {
                throw ToolFailure(description: "\(command) (in \(directory.path)) did not start: \(error)")
            }
            let reader = pipe.fileHandleForReading
            let data = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    // A thread of its own: the read blocks until the program ends (a minute for a build),
                    // and the cooperative threads that run tests are few.
                    Thread.detachNewThread { continuation.resume(returning: reader.readDataToEndOfFile()) }
                }
            } onCancel: {
                // The time limit cancels the test: stop the build rather than wait for it. SIGTERM first, so
                // swift-build can stop its compiler jobs; SIGKILL 5 s later, since on Linux a child inherits the
                // blocked SIGTERM of the cooperative thread that started it, and ignores it.
                process.terminate()
                DispatchQueue.global().asyncAfter(deadline: .now() + 5) {
                    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                }
            }
            process.waitUntilExit()
            let output = String(decoding: data, as: UTF8.self)
            guard process.terminationReason == .exit, process.terminationStatus == 0 else {
                let end = process.terminationReason == .exit ? "status" : "signal"
                throw ToolFailure(description: "\(command) (in \(directory.path)) failed with \(end) \(process.terminationStatus):\n\(output)")
            }
            return output
        }

        /// This process's environment without what the outer `swift test` (or Xcode, or a git hook) set
        /// for itself: the nested build, git and the app must run as from a plain shell.
        static let cleanEnvironment = ProcessInfo.processInfo.environment.filter { name, _ in
            let ownedByOuterRun = [
                "SWIFTPM_",        // SwiftPM's own switches (module caches, test modes) change the nested SwiftPM.
                "SWIFT_TESTING_", "SWT_", "XCTest", "__XCODE_", "__XPC_",   // the outer test run's settings
                "DYLD_",           // set on macOS for the test bundle's Testing/XCTest, not for swift or the app
                "GIT_",            // a hook's GIT_DIR or GIT_INDEX_FILE would aim the clone's git at the real repository
            ]
            return !ownedByOuterRun.contains { name.hasPrefix($0) } && name != "LLVM_PROFILE_FILE"   // coverage of the outer run
        }
    }

    private struct ToolFailure: Error, CustomStringConvertible {
        let description: String
    }
}
#endif
