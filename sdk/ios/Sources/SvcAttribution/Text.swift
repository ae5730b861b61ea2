extension String {
    /// Without leading and trailing white space (Unicode's White_Space, line breaks included).
    /// The standard library's table, not Foundation's: the same on every platform.
    var trimmed: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(scalars[first...last])
    }

    /// Trimmed, or `nil` when nothing is left.
    var nonBlank: String? {
        let text = trimmed
        return text.isEmpty ? nil : text
    }
}
