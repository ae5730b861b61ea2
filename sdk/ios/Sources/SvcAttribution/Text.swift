import Foundation

extension String {
    /// Without leading and trailing white space and line breaks.
    var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }

    /// Trimmed, or `nil` when nothing is left.
    var nonBlank: String? {
        let text = trimmed
        return text.isEmpty ? nil : text
    }
}
