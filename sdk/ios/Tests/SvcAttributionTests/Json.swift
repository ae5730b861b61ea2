import Foundation

/// A JSON value as the tests read it: through Foundation's JSONDecoder, independently of the
/// SDK's own reader, with numbers compared as numbers (sdk/vectors/README.md, "Comparing").
enum Json: Codable, Equatable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([Json])
    case object([String: Json])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([Json].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: Json].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The document `data` holds.
    static func parse(_ data: Data) throws -> Json {
        try JSONDecoder().decode(Json.self, from: data)
    }

    static func parse(_ text: String) throws -> Json {
        try parse(Data(text.utf8))
    }

    /// `value` as JSON, through its `Encodable` conformance.
    static func of(_ value: some Encodable) throws -> Json {
        try parse(JSONEncoder().encode(value))
    }

    var data: Data {
        // A Json always encodes.
        (try? JSONEncoder().encode(self)) ?? Data()
    }

    subscript(key: String) -> Json? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    var number: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    var description: String { String(decoding: data, as: UTF8.self) }
}

/// Placeholders bound so far in one case, by name (`uuid:install`, `timestamp:first_try`).
typealias Bindings = [String: String]

/// Compares `actual` with `expected` as sdk/vectors/README.md says: same keys, same types,
/// numbers equal as numbers, arrays in order; a placeholder matches its shape and binds.
/// Answers the differences, each saying where.
func differences(expected: Json, actual: Json, at path: String, bindings: inout Bindings) -> [String] {
    if case .string(let text) = expected, let placeholder = Placeholder(text) {
        guard case .string(let value) = actual else { return ["\(path): expected a \(placeholder.kind), got \(actual)"] }
        guard placeholder.matches(value) else { return ["\(path): \(value) is not a \(placeholder.kind)"] }
        guard let key = placeholder.key else { return [] }
        if let bound = bindings[key] {
            return bound == value ? [] : ["\(path): \(text) was \(bound), now \(value)"]
        }
        bindings[key] = value
        return []
    }
    switch (expected, actual) {
    case (.array(let items), .array(let values)):
        guard items.count == values.count else { return ["\(path): expected \(items.count) items, got \(actual)"] }
        return zip(items, values).enumerated().flatMap { index, pair in
            differences(expected: pair.0, actual: pair.1, at: "\(path)[\(index)]", bindings: &bindings)
        }
    case (.object(let members), .object(let values)):
        return Set(members.keys).union(values.keys).sorted().flatMap { key -> [String] in
            switch (members[key], values[key]) {
            case (let want?, let got?): return differences(expected: want, actual: got, at: "\(path).\(key)", bindings: &bindings)
            case (_?, nil): return ["\(path).\(key): missing"]
            default: return ["\(path).\(key): not expected (\(values[key] ?? .null))"]
            }
        }
    default:
        return expected == actual ? [] : ["\(path): expected \(expected), got \(actual)"]
    }
}

/// Replaces bound placeholders in an answer the fake service gives.
func filled(_ value: Json, _ bindings: Bindings) -> Json {
    switch value {
    case .string(let text):
        guard let key = Placeholder(text)?.key, let bound = bindings[key] else { return value }
        return .string(bound)
    case .array(let items): return .array(items.map { filled($0, bindings) })
    case .object(let members): return .object(members.mapValues { filled($0, bindings) })
    default: return value
    }
}

/// `{{uuid}}`, `{{uuid:NAME}}`, `{{timestamp}}` or `{{timestamp:NAME}}`.
struct Placeholder {
    let kind: String
    let key: String?

    init?(_ text: String) {
        guard text.hasPrefix("{{"), text.hasSuffix("}}"), text.count > 4 else { return nil }
        let parts = text.dropFirst(2).dropLast(2).split(separator: ":", omittingEmptySubsequences: false)
        guard let kind = parts.first, ["uuid", "timestamp"].contains(kind), parts.count <= 2 else { return nil }
        self.kind = String(kind)
        key = parts.count == 2 ? "\(kind):\(parts[1])" : nil
    }

    func matches(_ value: String) -> Bool {
        kind == "uuid" ? isLowercaseUUIDv4(value) : isTimestamp(value)
    }
}

/// `xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`, lower-case hex.
func isLowercaseUUIDv4(_ value: String) -> Bool {
    let chars = Array(value)
    guard chars.count == 36 else { return false }
    for (index, char) in chars.enumerated() {
        if [8, 13, 18, 23].contains(index) {
            if char != "-" { return false }
        } else if !"0123456789abcdef".contains(char) {
            return false
        }
    }
    return chars[14] == "4" && "89ab".contains(chars[19])
}

/// An ISO 8601 date-time with `Z` or an offset, that is a real instant.
func isTimestamp(_ value: String) -> Bool {
    let withFraction = ISO8601DateFormatter()
    withFraction.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return withFraction.date(from: value) != nil || ISO8601DateFormatter().date(from: value) != nil
}
