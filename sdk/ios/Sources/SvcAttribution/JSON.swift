import Foundation

/// A JSON document as the SDK writes request bodies and its stored state, and reads that state back.
///
/// Numbers are `Decimal` and keep their decimal digits both ways: Foundation's coders pass numbers
/// through `Double` on the iOS versions this package supports, which would turn a stored 9.99 into
/// 9.990000000000002. Members keep their order, so bodies read as the README shows them.
enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Decimal)
    case string(String)
    case array([JSONValue])
    case object([Member])

    /// One member of an object.
    struct Member: Equatable, Sendable {
        let key: String
        let value: JSONValue
    }

    /// An object of the members whose value is not `nil`: optional fields are left out, not `null`.
    static func object(_ members: KeyValuePairs<String, JSONValue?>) -> JSONValue {
        .object(members.compactMap { key, value in value.map { Member(key: key, value: $0) } })
    }

    /// The value of member `key` of an object.
    subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var number: Decimal? {
        if case .number(let value) = self { return value }
        return nil
    }
}

// MARK: - Writing

extension JSONValue {
    /// Compact JSON text.
    var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        // Decimal's description is plain digits with a `.`, whatever the locale: valid JSON.
        case .number(let value): out += value.isFinite ? value.description : "null"
        case .string(let value): Self.writeString(value, to: &out)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { out += "," }
                Self.writeString(member.key, to: &out)
                out += ":"
                member.value.write(to: &out)
            }
            out += "}"
        }
    }

    private static func writeString(_ value: String, to out: inout String) {
        out += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

// MARK: - Reading

extension JSONValue {
    /// The document `text` holds, or `nil` when it is not exactly one JSON value.
    init?(parsing text: String) {
        var parser = Parser(bytes: Array(text.utf8))
        guard let value = parser.value(depth: 0), parser.atEnd else { return nil }
        self = value
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0
        // Deep enough for anything the SDK stores, shallow enough for the stack.
        static let maxDepth = 32

        var atEnd: Bool {
            mutating get {
                skipSpace()
                return index == bytes.count
            }
        }

        mutating func value(depth: Int) -> JSONValue? {
            skipSpace()
            guard index < bytes.count, depth < Self.maxDepth else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "{"): return object(depth: depth)
            case UInt8(ascii: "["): return array(depth: depth)
            case UInt8(ascii: "\""): return string().map(JSONValue.string)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            default: return number()
            }
        }

        private mutating func object(depth: Int) -> JSONValue? {
            index += 1
            var members: [Member] = []
            if consume(UInt8(ascii: "}")) { return .object(members) }
            repeat {
                skipSpace()
                guard let key = string(), consume(UInt8(ascii: ":")), let value = value(depth: depth + 1) else { return nil }
                members.append(Member(key: key, value: value))
            } while consume(UInt8(ascii: ","))
            return consume(UInt8(ascii: "}")) ? .object(members) : nil
        }

        private mutating func array(depth: Int) -> JSONValue? {
            index += 1
            var items: [JSONValue] = []
            if consume(UInt8(ascii: "]")) { return .array(items) }
            repeat {
                guard let item = value(depth: depth + 1) else { return nil }
                items.append(item)
            } while consume(UInt8(ascii: ","))
            return consume(UInt8(ascii: "]")) ? .array(items) : nil
        }

        private mutating func string() -> String? {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            index += 1
            var utf16: [UInt16] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(decoding: utf16, as: UTF16.self)
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { return nil }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf16.append(UInt16(escape))
                    case UInt8(ascii: "b"): utf16.append(0x08)
                    case UInt8(ascii: "f"): utf16.append(0x0C)
                    case UInt8(ascii: "n"): utf16.append(0x0A)
                    case UInt8(ascii: "r"): utf16.append(0x0D)
                    case UInt8(ascii: "t"): utf16.append(0x09)
                    case UInt8(ascii: "u"):
                        guard index + 4 <= bytes.count, let unit = UInt16(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16) else { return nil }
                        utf16.append(unit)
                        index += 4
                    default: return nil
                    }
                case 0..<0x20:
                    return nil
                default:
                    // Copy the UTF-8 run up to the next quote or escape as it is.
                    var end = index
                    while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 { end += 1 }
                    utf16.append(contentsOf: String(decoding: bytes[(index - 1)..<end], as: UTF8.self).utf16)
                    index = end
                }
            }
            return nil
        }

        private mutating func number() -> JSONValue? {
            let start = index
            _ = take(UInt8(ascii: "-"))
            guard digits() else { return nil }
            if take(UInt8(ascii: ".")), !digits() { return nil }
            if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
                if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
                guard digits() else { return nil }
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")).map(JSONValue.number)
        }

        private mutating func digits() -> Bool {
            let start = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
            return index > start
        }

        private mutating func literal(_ word: String, _ value: JSONValue) -> JSONValue? {
            let utf8 = Array(word.utf8)
            guard bytes.count - index >= utf8.count, Array(bytes[index..<index + utf8.count]) == utf8 else { return nil }
            index += utf8.count
            return value
        }

        /// Skips white space, then takes `byte` if it is next.
        private mutating func consume(_ byte: UInt8) -> Bool {
            skipSpace()
            return take(byte)
        }

        /// Takes `byte` if it is next (no white space allowed before it).
        private mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        private mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }
    }
}
