import Foundation
import Testing

/// The library must run on iOS 15 and macOS 12 (Package.swift's platforms), so it may use no API
/// Apple shipped later. On macOS the compiler checks that itself. On Linux it checks no Apple
/// availability, so there the library's typed AST is compared with the toolchain's symbol graphs,
/// which carry each declaration's iOS and macOS versions. Code only Apple's SDK compiles
/// (`#if canImport(UIKit)`) gets a scan for names of newer APIs instead, on every platform.
@Suite("Availability")
struct AvailabilityTests {
    /// sdk/ios/Sources.
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources").standardized

    @Test("no name of an API newer than iOS 15 / macOS 12 in the sources, Apple-only code included")
    func namesInSources() throws {
        let files = try swiftFiles(under: Self.sources)
        #expect(!files.isEmpty, "no Swift file under \(Self.sources.path)")
        var found: [String] = []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            let path = file.standardizedFileURL.path.replacingOccurrences(of: Self.sources.path + "/", with: "")
            found += NewerAPINames.find(in: text).map { "\(path):\($0.line): \($0.name) (\($0.why))" }
        }
        #expect(found.isEmpty, "the package supports iOS 15 and macOS 12, and these name later APIs:\n\(found.joined(separator: "\n"))")
    }

    @Test("the name scan finds names in code, in any #if branch and after a // inside a string; comments and docs may name them")
    func nameScanFindsNames() {
        let code = #"""
            /// Docs may name Mutex and `URL.appending(path:)`.
            // So may comments: try await Task.sleep(for: .seconds(1))
            /* And block comments /* nested */: ContinuousClock */
            #if canImport(UIKit)
            let control = UIPasteControl(configuration: .init())
            #endif
            let url = URL(string: "https://example.com/\("a")")!.appending(path: "b") // not Regex
            let text = Date().formatted(.dateTime) + #"raw "// no comment"# + String(describing: Duration.self)
            let animated = UIView.animate(withDuration: 1) { }
            """#
        let found = NewerAPINames.find(in: code)
        #expect(found.map(\.name) == ["UIPasteControl", "appending(path:", "Duration"])
        #expect(found.map(\.line) == [5, 7, 8])
    }
}

/// The `.swift` files under `directory`, sorted.
private func swiftFiles(under directory: URL) throws -> [URL] {
    guard let walk = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else {
        throw CocoaError(.fileReadNoSuchFile)
    }
    return walk.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }.sorted { $0.path < $1.path }
}

// MARK: - Names of newer APIs

/// Names of APIs newer than iOS 15 / macOS 12, found as text: the only check of code Linux cannot
/// compile. Comments are skipped so that docs may name them. `formatted(_:)` and its styles are
/// iOS 15, so not listed.
private enum NewerAPINames {
    struct Name: Sendable {
        let text: String
        let why: String
        /// Also matches longer names that begin with `text` (`.withLockUnchecked`).
        var prefix = false
    }

    static let names: [Name] = [
        Name(text: "Mutex", why: "Synchronization, iOS 18 / macOS 15"),
        Name(text: "Atomic", why: "Synchronization, iOS 18 / macOS 15", prefix: true),
        Name(text: "Synchronization", why: "iOS 18 / macOS 15"),
        Name(text: "OSAllocatedUnfairLock", why: "iOS 16 / macOS 13"),
        Name(text: ".withLock", why: "NSLocking's, OSAllocatedUnfairLock's, Mutex's: iOS 16 / macOS 13 or later", prefix: true),
        Name(text: "sleep(for:", why: "Task.sleep(for:) and Clock's, iOS 16 / macOS 13"),
        Name(text: "sleep(until:", why: "iOS 16 / macOS 13"),
        Name(text: "ContinuousClock", why: "iOS 16 / macOS 13"),
        Name(text: "SuspendingClock", why: "iOS 16 / macOS 13"),
        Name(text: "Duration", why: "iOS 16 / macOS 13"),
        Name(text: "Regex", why: "iOS 16 / macOS 13", prefix: true),
        Name(text: "#/", why: "regex literal, iOS 16 / macOS 13"),
        Name(text: "appending(path:", why: "URL, iOS 16 / macOS 13"),
        Name(text: "appending(component:", why: "URL, iOS 16 / macOS 13"),
        Name(text: "appending(components:", why: "URL, iOS 16 / macOS 13"),
        Name(text: "appending(queryItems:", why: "URL, iOS 16 / macOS 13"),
        Name(text: "URL(filePath:", why: "iOS 16 / macOS 13"),
        Name(text: "UIPasteControl", why: "iOS 16"),
        Name(text: "PasteButton", why: "SwiftUI, iOS 16 / macOS 13"),
        Name(text: "Observable", why: "Observation, iOS 17 / macOS 14"),
        Name(text: "Observation", why: "iOS 17 / macOS 14"),
        Name(text: "withDiscardingTaskGroup", why: "iOS 17 / macOS 14"),
        Name(text: "withThrowingDiscardingTaskGroup", why: "iOS 17 / macOS 14"),
        Name(text: "Task.immediate", why: "iOS 26 / macOS 26"),
        Name(text: "InlineArray", why: "iOS 26 / macOS 26"),
        Name(text: "AppTransaction", why: "StoreKit, iOS 16 / macOS 13"),
        Name(text: "updatePostbackConversionValue", why: "SKAdNetwork, iOS 15.4"),
        Name(text: "CoarseConversionValue", why: "SKAdNetwork, iOS 16.1"),
        Name(text: "AdAttributionKit", why: "iOS 17.4"),
    ]

    struct Hit: Equatable {
        let line: Int
        let name: String
        let why: String
    }

    /// The names `source` uses outside comments, by line (from 1).
    static func find(in source: String) -> [Hit] {
        var hits: [Hit] = []
        let lines = withoutComments(source).split(separator: "\n", omittingEmptySubsequences: false)
        for (index, line) in lines.enumerated() {
            for name in names {
                var from = line.startIndex
                while let range = line.range(of: name.text, range: from..<line.endIndex) {
                    from = range.upperBound
                    // A whole name: `withDuration` or `ObservableObject` is not `Duration` or `Observable`.
                    if isIdentifier(name.text.first), range.lowerBound > line.startIndex, isIdentifier(line[line.index(before: range.lowerBound)]) { continue }
                    if !name.prefix, isIdentifier(name.text.last), range.upperBound < line.endIndex, isIdentifier(line[range.upperBound]) { continue }
                    hits.append(Hit(line: index + 1, name: name.text, why: name.why))
                    break
                }
            }
        }
        return hits.sorted { ($0.line, $0.name) < ($1.line, $1.name) }
    }

    private static func isIdentifier(_ character: Character?) -> Bool {
        guard let character else { return false }
        return character == "_" || character.isLetter || character.isNumber
    }

    /// `source` with its comments removed and line breaks kept (so line numbers hold). String
    /// literals are read as such, so that the `//` of `"https://…"` starts no comment.
    static func withoutComments(_ source: String) -> String {
        var lexer = Lexer(bytes: Array(source.utf8))
        lexer.code(inInterpolation: false)
        return String(decoding: lexer.out, as: UTF8.self)
    }

    private struct Lexer {
        let bytes: [UInt8]
        var index = 0
        var out: [UInt8] = []

        private func byte(at offset: Int) -> UInt8? {
            index + offset < bytes.count ? bytes[index + offset] : nil
        }

        /// Code up to the end, or through the `)` that closes a string's `\(`.
        mutating func code(inInterpolation: Bool) {
            var depth = 0
            while let byte = byte(at: 0) {
                switch byte {
                case UInt8(ascii: "/") where self.byte(at: 1) == UInt8(ascii: "/"):
                    while let next = self.byte(at: 0), next != UInt8(ascii: "\n") { index += 1 }
                case UInt8(ascii: "/") where self.byte(at: 1) == UInt8(ascii: "*"):
                    blockComment()
                case UInt8(ascii: "\""), UInt8(ascii: "#"):
                    var hashes = 0
                    while self.byte(at: hashes) == UInt8(ascii: "#") { hashes += 1 }
                    if self.byte(at: hashes) == UInt8(ascii: "\"") {
                        string(hashes: hashes)
                    } else {
                        out.append(byte)
                        index += 1
                    }
                default:
                    out.append(byte)
                    index += 1
                    guard inInterpolation else { continue }
                    if byte == UInt8(ascii: "(") { depth += 1 }
                    if byte == UInt8(ascii: ")") {
                        if depth == 0 { return }
                        depth -= 1
                    }
                }
            }
        }

        /// `/* … */`, nested ones included, as spaces.
        private mutating func blockComment() {
            var depth = 0
            while let byte = byte(at: 0) {
                if byte == UInt8(ascii: "/"), self.byte(at: 1) == UInt8(ascii: "*") {
                    depth += 1
                    out += [0x20, 0x20]
                    index += 2
                } else if byte == UInt8(ascii: "*"), self.byte(at: 1) == UInt8(ascii: "/") {
                    depth -= 1
                    out += [0x20, 0x20]
                    index += 2
                    if depth == 0 { return }
                } else {
                    out.append(byte == UInt8(ascii: "\n") ? byte : 0x20)
                    index += 1
                }
            }
        }

        /// A string literal, kept: `"…"`, `"""…"""`, raw `#"…"#`, with `\(…)` read as code.
        private mutating func string(hashes: Int) {
            let quotes = byte(at: hashes + 1) == UInt8(ascii: "\"") && byte(at: hashes + 2) == UInt8(ascii: "\"") ? 3 : 1
            copy(hashes + quotes)
            while let byte = byte(at: 0) {
                if byte == UInt8(ascii: "\\"), (0..<hashes).allSatisfy({ self.byte(at: 1 + $0) == UInt8(ascii: "#") }) {
                    if self.byte(at: 1 + hashes) == UInt8(ascii: "(") {
                        copy(2 + hashes)
                        code(inInterpolation: true)
                    } else {
                        copy(min(2 + hashes, bytes.count - index))
                    }
                } else if byte == UInt8(ascii: "\""), (0..<quotes).allSatisfy({ self.byte(at: $0) == UInt8(ascii: "\"") }),
                          (0..<hashes).allSatisfy({ self.byte(at: quotes + $0) == UInt8(ascii: "#") }) {
                    copy(quotes + hashes)
                    return
                } else if byte == UInt8(ascii: "\n"), quotes == 1 {
                    return  // An unterminated string: the rest of the line was in it.
                } else {
                    copy(1)
                }
            }
        }

        private mutating func copy(_ count: Int) {
            out += bytes[index..<index + count]
            index += count
        }
    }
}

#if os(Linux)
// MARK: - The typed AST against the symbol graphs (Linux)

extension AvailabilityTests {
    @Test("the library's Linux-compiled code references no declaration newer than iOS 15 / macOS 12")
    func libraryReferences() async throws {
        let files = try swiftFiles(under: Self.sources.appendingPathComponent("SvcAttribution"))
        let report = try await AvailabilityCheck.run(files: files, module: "SvcAttribution")
        // Proof that the lookups work: the library calls dozens of SDK declarations.
        #expect(report.resolved.count > 50, "only \(report.resolved.count) SDK declarations found in the symbol graphs")
        #expect(report.findings.isEmpty, "the package supports iOS 15 and macOS 12, and the library uses:\n\(report.findings.joined(separator: "\n"))")
    }

    @Test("the check reports each newer API a fixture calls")
    func reportsNewerCalls() async throws {
        let report = try await AvailabilityCheck.run(fixture: """
            import Foundation
            import Synchronization

            func newer() async throws {
                try await Task.sleep(for: .seconds(1))
                _ = URL(string: "https://example.com")?.appending(path: "a")
                let counter = Mutex(0)
                counter.withLock { $0 += 1 }
                _ = "abc".contains(#/b/#)
                NSLock().withLock { }
            }
            """)
        for name in ["_Concurrency Task.sleep(for:tolerance:clock:)", "FoundationEssentials URL.appending(path:directoryHint:)",
                     "Synchronization Mutex.withLock(_:)", "_StringProcessing Regex:",
                     "Foundation NSLocking.withLock(_:)"] {
            #expect(report.findings.contains { $0.hasPrefix(name) }, "\(name) not reported; reported:\n\(report.findings.joined(separator: "\n"))")
        }
        #expect(report.findings.contains("_Concurrency Task.sleep(for:tolerance:clock:): iOS 16.0, macOS 13.0"))
    }

    @Test("the check reports newer types a fixture only names, with no call")
    func reportsNewerTypes() async throws {
        let report = try await AvailabilityCheck.run(fixture: """
            import Synchronization

            struct Guarded: ~Copyable { let state: Mutex<Int> }
            func wait(_ limit: Duration?) {}
            func first(_ instants: [ContinuousClock.Instant]) -> ContinuousClock.Instant? { instants.first }
            """)
        for name in ["Synchronization Mutex:", "Swift Duration:", "_Concurrency ContinuousClock.Instant:"] {
            #expect(report.findings.contains { $0.hasPrefix(name) }, "\(name) not reported; reported:\n\(report.findings.joined(separator: "\n"))")
        }
    }

    @Test("the check reports nothing for a fixture of older APIs, whose declarations it finds")
    func passesOlderAPIs() async throws {
        let report = try await AvailabilityCheck.run(fixture: """
            import Foundation

            func older() async throws {
                try await Task.sleep(nanoseconds: 1_000)
                _ = URL(string: "https://example.com")
            }

            func locked(_ lock: NSLock) {
                lock.lock()
                lock.unlock()
            }
            """)
        #expect(report.findings.isEmpty, "\(report.findings.joined(separator: "\n"))")
        for name in ["_Concurrency Task.sleep(nanoseconds:)", "FoundationEssentials URL.init(string:)", "Foundation NSLock.lock()"] {
            #expect(report.resolved.contains(name), "\(name) not found in the symbol graphs")
        }
    }
}

/// What one check found.
private struct AvailabilityReport: Sendable {
    /// `<module> <declaration>: <why>`, sorted.
    var findings: [String]
    /// The SDK declarations the references resolved to, newer or not (`<module> <declaration>`).
    var resolved: Set<String>
}

private enum AvailabilityCheck {
    /// Always extracted; any other module the manglings name is extracted too.
    static let modules: Set<String> = ["Swift", "_Concurrency", "_StringProcessing", "Synchronization",
                                       "FoundationEssentials", "Foundation", "FoundationNetworking", "Dispatch"]
    /// Module names a mangling may hold that have no symbol graph: the compiler's, and C's.
    static let notModules: Set<String> = ["Builtin", "__C", "__C_Synthesized"]

    /// Checks the source `text` as a module of its own.
    static func run(fixture text: String) async throws -> AvailabilityReport {
        try await run(module: "Fixture") { directory in
            let file = directory.appendingPathComponent("Fixture.swift")
            try Data(text.utf8).write(to: file)
            return [file]
        }
    }

    /// Checks `files`, compiled as module `module`, as SwiftPM builds a package's target.
    static func run(files: [URL], module: String) async throws -> AvailabilityReport {
        try await run(module: module) { _ in files }
    }

    private static func run(module: String, files: (URL) throws -> [URL]) async throws -> AvailabilityReport {
        let index = AppleAvailability.shared
        let workspace = try await index.enter()
        do {
            let directory = workspace.appendingPathComponent(UUID().uuidString)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let report = try await run(module: module, files: files(directory), directory: directory, workspace: workspace)
            await index.leave()
            return report
        } catch {
            await index.leave()
            throw error
        }
    }

    private static func run(module: String, files: [URL], directory: URL, workspace: URL) async throws -> AvailabilityReport {
        let index = AppleAvailability.shared
        let tools = try await index.toolchain()
        let references = try await tools.references(in: files, module: module, directory: directory, workspace: workspace)
        let demangled = try await tools.demangle(references.filter { !$0.hasPrefix("s:e:") }.map(mangled), directory: directory)
        try await index.load(demangled.modules.subtracting(notModules).subtracting([module]).union(modules), workspace: workspace)

        var findings: Set<String> = []
        var resolved: Set<String> = []
        for usr in references where usr.hasPrefix("s:") {
            guard let verdict = await index.verdict(for: usr) else { continue }
            resolved.insert(verdict.name)
            if let problem = verdict.problem { findings.insert("\(verdict.name): \(problem)") }
        }
        // A type named only in a type annotation or a generic argument has no USR of its own in
        // the AST, only manglings (`$ss8DurationVSgD`): matched by the types they spell.
        let newerTypes = try await index.newerTypes(directory: directory)
        for type in demangled.types {
            if let verdict = newerTypes[type], let problem = verdict.problem { findings.insert("\(verdict.name): \(problem)") }
        }
        return AvailabilityReport(findings: findings.sorted(), resolved: resolved)
    }

    /// A USR (`s:…`) as the demangler takes it (`$s…`).
    static func mangled(_ reference: String) -> String {
        reference.hasPrefix("s:") ? "$s" + reference.dropFirst(2) : reference
    }

    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("svc-availability-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }
}

/// An OS version in a symbol graph: `{"major":16,"minor":0}`.
private struct OSVersion: Comparable, Decodable, Sendable, CustomStringConvertible {
    let major: Int
    let minor: Int
    let patch: Int

    init(_ major: Int, _ minor: Int, _ patch: Int = 0) {
        (self.major, self.minor, self.patch) = (major, minor, patch)
    }

    init(from decoder: any Decoder) throws {
        enum Keys: String, CodingKey { case major, minor, patch }
        let container = try decoder.container(keyedBy: Keys.self)
        major = try container.decode(Int.self, forKey: .major)
        minor = try container.decodeIfPresent(Int.self, forKey: .minor) ?? 0
        patch = try container.decodeIfPresent(Int.self, forKey: .patch) ?? 0
    }

    static func < (lhs: OSVersion, rhs: OSVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }

    var description: String { patch == 0 ? "\(major).\(minor)" : "\(major).\(minor).\(patch)" }
}

/// The Apple availability of the toolchain's public declarations, from its symbol graphs. Shared
/// by this suite's tests (extracting the standard library's graph is the slow part), kept in
/// memory only.
private actor AppleAvailability {
    static let shared = AppleAvailability()

    /// The deployment targets (Package.swift).
    static let oldest = ["iOS": OSVersion(15, 0), "macOS": OSVersion(12, 0)]

    /// Declarations Apple shipped later than the symbol graphs say: swift-corelibs-foundation
    /// marks no availability. Name → iOS and macOS versions that introduced it.
    static let laterOnApple: [String: [String: OSVersion]] = [
        "Foundation NSLocking.withLock(_:)": ["iOS": OSVersion(16, 0), "macOS": OSVersion(13, 0)],
    ]

    /// Declarations a symbol graph marks newer than Apple shipped them (swift-foundation's
    /// re-implementations may): name → why it is fine. None needed so far.
    static let allowed: [String: String] = [:]

    struct Verdict: Sendable {
        /// `<module> <path>`.
        let name: String
        /// Why iOS 15 / macOS 12 lack it, or nil.
        let problem: String?
    }

    struct Symbol: Sendable {
        let name: String
        let kind: String
        var availability: [Graph.Availability]
    }

    private var tools: Toolchain?
    /// The checks' directory, with the module cache the tools share (compiling it takes a
    /// second or more each time): removed when the last check running ends.
    private var workspace: URL?
    private var checks = 0
    private var symbols: [String: Symbol] = [:]
    private var parents: [String: String] = [:]
    private var loads: [String: Task<[String: ModuleGraph], any Error>] = [:]
    private var merged: Set<String> = []
    /// Demangled names (`Swift.Duration`) of the newer types, by USR.
    private var typeNames: [String: String] = [:]

    func enter() throws -> URL {
        if let workspace {
            checks += 1
            return workspace
        }
        let made = try AvailabilityCheck.temporaryDirectory()
        workspace = made
        checks = 1
        return made
    }

    func leave() {
        checks -= 1
        guard checks == 0, let workspace else { return }
        try? FileManager.default.removeItem(at: workspace)
        self.workspace = nil
    }

    func toolchain() async throws -> Toolchain {
        if let tools { return tools }
        let found = try await Toolchain.find()
        tools = found
        return found
    }

    /// Extracts the graphs of `modules` not extracted yet, all at once.
    func load(_ modules: Set<String>, workspace: URL) async throws {
        let tools = try await toolchain()
        let missing = modules.filter { loads[$0] == nil }
        if !missing.isEmpty {
            let batch = Task { try await tools.symbolGraphs(of: missing, workspace: workspace) }
            for module in missing { loads[module] = batch }
        }
        for module in modules.sorted() {
            guard let load = loads[module] else { continue }
            let graphs = try await load.value
            guard !merged.contains(module), let graph = graphs[module] else { continue }
            merged.insert(module)
            for (usr, symbol) in graph.symbols {
                if symbols[usr] == nil { symbols[usr] = symbol } else { symbols[usr]?.availability += symbol.availability }
            }
            parents.merge(graph.parents) { first, _ in first }
        }
    }

    /// The verdict on `usr`, or nil when no graph holds it (the module's own declarations,
    /// underscored ones, C functions).
    func verdict(for usr: String) -> Verdict? {
        guard let symbol = symbols[usr] else { return nil }
        if Self.allowed[symbol.name] != nil { return Verdict(name: symbol.name, problem: nil) }
        // A member is no older than its type: the stricter of the two, up to the outermost.
        var entries = symbol.availability
        var seen: Set<String> = [usr]
        var current = usr
        while let parent = parents[current], seen.insert(parent).inserted {
            entries += symbols[parent]?.availability ?? []
            current = parent
        }
        var problems: [String] = []
        for (domain, oldest) in Self.oldest.sorted(by: { $0.key < $1.key }) {
            let mine = entries.filter { $0.domain == domain }
            if mine.contains(where: { $0.isUnconditionallyUnavailable == true }) {
                problems.append("unavailable on \(domain)")
            } else if let obsoleted = mine.compactMap(\.obsoleted).min() {
                problems.append("obsoleted in \(domain) \(obsoleted)")
            } else if let introduced = (mine.compactMap(\.introduced) + [Self.laterOnApple[symbol.name]?[domain]].compactMap { $0 }).max(),
                      introduced > oldest {
                problems.append("\(domain) \(introduced)")
            }
        }
        return Verdict(name: symbol.name, problem: problems.isEmpty ? nil : problems.joined(separator: ", "))
    }

    /// The verdicts on the newer types, by demangled name (`Swift.Duration`).
    func newerTypes(directory: URL) async throws -> [String: Verdict] {
        let kinds: Set<String> = ["swift.struct", "swift.class", "swift.enum", "swift.protocol", "swift.typealias", "swift.actor"]
        var newer: [String: Verdict] = [:]
        for (usr, symbol) in symbols where kinds.contains(symbol.kind) {
            if let verdict = verdict(for: usr), verdict.problem != nil { newer[usr] = verdict }
        }
        let unnamed = newer.keys.filter { typeNames[$0] == nil }
        if !unnamed.isEmpty {
            let demangled = try await toolchain().demangle(unnamed.map(AvailabilityCheck.mangled), directory: directory)
            for usr in unnamed {
                if let name = demangled.outermostType[AvailabilityCheck.mangled(usr)] { typeNames[usr] = name }
            }
        }
        var byName: [String: Verdict] = [:]
        for (usr, verdict) in newer {
            if let name = typeNames[usr] { byName[name] = verdict }
        }
        return byName
    }
}

/// A `<module>.symbols.json` (or `<module>@<other>.symbols.json`), what this check reads of it.
private struct Graph: Decodable {
    struct Symbol: Decodable {
        struct Identifier: Decodable { let precise: String }
        struct Kind: Decodable { let identifier: String }
        let identifier: Identifier
        let kind: Kind
        let pathComponents: [String]
        let availability: [Availability]?
    }

    struct Availability: Decodable, Sendable {
        let domain: String?
        let introduced: OSVersion?
        let obsoleted: OSVersion?
        let isUnconditionallyUnavailable: Bool?
    }

    struct Relationship: Decodable {
        let kind: String
        let source: String
        let target: String
    }

    let symbols: [Symbol]
    let relationships: [Relationship]
}

/// One module's symbols, from all its graph files.
private struct ModuleGraph: Sendable {
    var symbols: [String: AppleAvailability.Symbol] = [:]
    /// A member's USR → its type's (`memberOf`).
    var parents: [String: String] = [:]
}

/// What the demangler made of a batch of manglings.
private struct Demangled: Sendable {
    /// Every module named.
    var modules: Set<String> = []
    /// Every nominal type named, anywhere in a mangling (`Swift.Duration` in `Optional<Duration>`).
    var types: Set<String> = []
    /// The type each mangling is, when it is one (a USR of a type).
    var outermostType: [String: String] = [:]
}

/// The tools next to the `swift` this test runs with.
private struct Toolchain: Sendable {
    let swiftc: URL
    let symbolGraphExtract: URL
    let demangler: URL
    let triple: String

    static func find() async throws -> Toolchain {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/opt/swift/usr/bin"]
        for directory in directories {
            let swift = URL(fileURLWithPath: directory).appendingPathComponent("swift")
            guard FileManager.default.isExecutableFile(atPath: swift.path) else { continue }
            // A symlinked `swift` (/usr/bin/swift) has its tools where it points.
            let bin = swift.resolvingSymlinksInPath().deletingLastPathComponent()
            let tools = ["swiftc", "swift-symbolgraph-extract", "swift-demangle"].map { bin.appendingPathComponent($0) }
            guard tools.allSatisfy({ FileManager.default.isExecutableFile(atPath: $0.path) }) else { continue }
            let directory = try AvailabilityCheck.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            struct Info: Decodable {
                struct Target: Decodable { let triple: String }
                let target: Target
            }
            let info = try await run(tools[0], ["-print-target-info"], in: directory)
            let triple = try JSONDecoder().decode(Info.self, from: info).target.triple
            return Toolchain(swiftc: tools[0], symbolGraphExtract: tools[1], demangler: tools[2], triple: triple)
        }
        throw ToolFailure(description: "no swift with swiftc, swift-symbolgraph-extract and swift-demangle beside it on PATH or in /opt/swift/usr/bin")
    }

    /// Every USR or mangled type (`s:…`, `$s…`) in the typed AST of `files`. Read by text, since
    /// they sit under many keys (`decl_usr`, `type`, `interface_type`, `protocol`, …). C
    /// declarations (`c:@F@log10`) are left out: their Apple availability is Darwin's, not here.
    func references(in files: [URL], module: String, directory: URL, workspace: URL) async throws -> Set<String> {
        var arguments = ["-frontend", "-dump-ast", "-dump-ast-format", "json", "-parse-as-library", "-swift-version", "6",
                         "-D", "SWIFT_PACKAGE", "-target", triple, "-module-name", module,
                         "-module-cache-path", workspace.appendingPathComponent("ModuleCache").path]
        // One output per file: with no primary file only the first file's AST is dumped.
        let outputs = files.indices.map { directory.appendingPathComponent("ast-\($0).json") }
        for file in files { arguments += ["-primary-file", file.path] }
        for output in outputs { arguments += ["-o", output.path] }
        _ = try await run(swiftc, arguments, in: directory)

        var found: Set<String> = []
        for output in outputs {
            let bytes = [UInt8](try Data(contentsOf: output))
            var index = 0
            while index + 2 < bytes.count {
                defer { index += 1 }
                guard bytes[index] == UInt8(ascii: "\""),
                      (bytes[index + 1] == UInt8(ascii: "s") && bytes[index + 2] == UInt8(ascii: ":"))
                      || (bytes[index + 1] == UInt8(ascii: "$") && bytes[index + 2] == UInt8(ascii: "s")) else { continue }
                var end = index + 1
                while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\") { end += 1 }
                guard end < bytes.count, bytes[end] == UInt8(ascii: "\"") else { continue }
                found.insert(String(decoding: bytes[(index + 1)..<end], as: UTF8.self))
                index = end
            }
        }
        return found
    }

    /// Demangles `names` (`swift-demangle --tree-only`) and collects the modules and types they name.
    func demangle(_ names: [String], directory: URL) async throws -> Demangled {
        var result = Demangled()
        var start = 0
        while start < names.count {
            let batch = Array(names[start..<min(start + 500, names.count)])
            start += batch.count
            let output = [UInt8](try await run(demangler, ["--tree-only"] + batch, in: directory))
            var tree = DemangleTree()
            var mangling: String?
            func finish() {
                if let mangling, let outermost = tree.outermostType() { result.outermostType[mangling] = outermost }
                result.modules.formUnion(tree.modules)
                result.types.formUnion(tree.types())
                tree = DemangleTree()
            }
            // Bytes, not Characters: megabytes of output, read in a debug build.
            let header = Array("Demangling for ".utf8)
            for line in output.split(separator: UInt8(ascii: "\n")) {
                if line.starts(with: header) {
                    finish()
                    mangling = String(decoding: line.dropFirst(header.count), as: UTF8.self)
                } else {
                    tree.add(line)
                }
            }
            finish()
        }
        return result
    }

    /// Extracts the symbol graphs of `modules` in parallel.
    func symbolGraphs(of modules: Set<String>, workspace: URL) async throws -> [String: ModuleGraph] {
        let directory = workspace.appendingPathComponent(UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = workspace.appendingPathComponent("ModuleCache").path
        return try await withThrowingTaskGroup(of: (String, ModuleGraph).self) { group in
            for module in modules {
                group.addTask {
                    let output = directory.appendingPathComponent(module)
                    try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
                    _ = try await run(symbolGraphExtract, ["-module-name", module, "-target", triple, "-output-dir", output.path,
                                                           "-minimum-access-level", "public", "-module-cache-path", cache,
                                                           // Copies of protocol extensions' members per conforming type, under
                                                           // USRs no AST holds: half of Swift's graph.
                                                           "-skip-synthesized-members", "-skip-inherited-docs"], in: output)
                    var graph = ModuleGraph()
                    let files = try FileManager.default.contentsOfDirectory(atPath: output.path).filter { $0.hasSuffix(".symbols.json") }
                    guard !files.isEmpty else { throw ToolFailure(description: "swift-symbolgraph-extract wrote no graph of \(module)") }
                    for file in files {
                        // The declaring module: `_Concurrency@Swift.symbols.json` holds _Concurrency's
                        // declarations (Swift's extraction writes it too), `Foundation@Swift` Foundation's.
                        let declaring = file.prefix { $0 != "@" && $0 != "." }
                        let decoded = try JSONDecoder().decode(Graph.self, from: Data(contentsOf: output.appendingPathComponent(file)))
                        for symbol in decoded.symbols {
                            let usr = symbol.identifier.precise
                            if graph.symbols[usr] != nil {
                                graph.symbols[usr]?.availability += symbol.availability ?? []
                                continue
                            }
                            graph.symbols[usr] = AppleAvailability.Symbol(name: "\(declaring) \(symbol.pathComponents.joined(separator: "."))",
                                                                          kind: symbol.kind.identifier, availability: symbol.availability ?? [])
                        }
                        for relationship in decoded.relationships where relationship.kind == "memberOf" {
                            graph.parents[relationship.source] = relationship.target
                        }
                    }
                    return (module, graph)
                }
            }
            var graphs: [String: ModuleGraph] = [:]
            for try await (module, graph) in group { graphs[module] = graph }
            return graphs
        }
    }
}

/// One `swift-demangle --tree-only` tree: `kind=Structure` lines, indented two spaces a level.
private struct DemangleTree {
    private var kinds: [String] = []
    private var texts: [String?] = []
    private var children: [[Int]] = []
    private var roots: [Int] = []
    /// (depth, node) of the nodes that may still get children.
    private var open: [(Int, Int)] = []

    private static let nominal: Set<String> = ["Structure", "Class", "Enum", "Protocol", "TypeAlias", "OtherNominalType"]
    private static let kindPrefix = Array("kind=".utf8)
    private static let textPrefix = Array(", text=\"".utf8)

    mutating func add(_ line: ArraySlice<UInt8>) {
        let body = line.drop { $0 == UInt8(ascii: " ") }
        let depth = (body.startIndex - line.startIndex) / 2
        guard body.starts(with: Self.kindPrefix) else { return }
        let rest = body.dropFirst(Self.kindPrefix.count)
        let comma = rest.firstIndex(of: UInt8(ascii: ",")) ?? rest.endIndex
        let kind = String(decoding: rest[..<comma], as: UTF8.self)
        var text: String?
        if rest[comma...].starts(with: Self.textPrefix) {
            text = String(decoding: rest[comma...].dropFirst(Self.textPrefix.count).dropLast(), as: UTF8.self)
        }
        let node = kinds.count
        kinds.append(kind)
        texts.append(text)
        children.append([])
        while let last = open.last, last.0 >= depth { open.removeLast() }
        if let parent = open.last { children[parent.1].append(node) } else { roots.append(node) }
        open.append((depth, node))
    }

    var modules: Set<String> {
        Set(kinds.indices.filter { kinds[$0] == "Module" }.compactMap { texts[$0] })
    }

    func types() -> Set<String> {
        Set(kinds.indices.filter { Self.nominal.contains(kinds[$0]) }.compactMap(name))
    }

    /// The type a mangling of a type's USR is: `Global` → `Structure`.
    func outermostType() -> String? {
        guard let global = roots.first, let node = children[global].first, Self.nominal.contains(kinds[node]) else { return nil }
        return name(of: node)
    }

    /// `Swift.Duration`, `_Concurrency.ContinuousClock.Instant`; a type declared in an extension
    /// is named after the extended type, so both sides of a match spell it alike.
    private func name(of node: Int) -> String? {
        switch kinds[node] {
        case "Module": return texts[node]
        case "Type": return children[node].first.flatMap(name)
        case "Extension": return children[node].count > 1 ? name(of: children[node][1]) : nil
        case _ where Self.nominal.contains(kinds[node]):
            guard children[node].count >= 2, kinds[children[node][1]] == "Identifier",
                  let context = name(of: children[node][0]), let text = texts[children[node][1]] else { return nil }
            return "\(context).\(text)"
        default: return nil
        }
    }
}

private struct ToolFailure: Error, CustomStringConvertible {
    let description: String
}

/// Runs `tool` in `directory` and answers what it printed; throws, with its errors, unless it exits 0.
private func run(_ tool: URL, _ arguments: [String], in directory: URL) async throws -> Data {
    let id = UUID().uuidString
    let output = directory.appendingPathComponent("\(id).out")
    let errors = directory.appendingPathComponent("\(id).err")
    defer {
        try? FileManager.default.removeItem(at: output)
        try? FileManager.default.removeItem(at: errors)
    }
    // Files, not pipes: a full pipe would block the tool.
    guard FileManager.default.createFile(atPath: output.path, contents: nil),
          FileManager.default.createFile(atPath: errors.path, contents: nil) else {
        throw ToolFailure(description: "cannot write in \(directory.path)")
    }
    let outputHandle = try FileHandle(forWritingTo: output)
    let errorHandle = try FileHandle(forWritingTo: errors)
    let process = Process()
    process.executableURL = tool
    process.arguments = arguments
    process.currentDirectoryURL = directory
    process.standardOutput = outputHandle
    process.standardError = errorHandle
    // Waited for without blocking a thread of the (two-thread) cooperative pool.
    let status: Int32 = try await withCheckedThrowingContinuation { continuation in
        process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
        do { try process.run() } catch { continuation.resume(throwing: error) }
    }
    try? outputHandle.close()
    try? errorHandle.close()
    guard status == 0 else {
        let text = String(decoding: (try? Data(contentsOf: errors)) ?? Data(), as: UTF8.self)
        throw ToolFailure(description: "\(tool.lastPathComponent) \(arguments.prefix(8).joined(separator: " ")) … exited \(status):\n\(text.prefix(4000))")
    }
    return try Data(contentsOf: output)
}
#endif
