/// The clipboard, read at most while the install is unreported, and only when the app allows it
/// (`trackInstall(readClipboard: true)`).
///
/// On iOS the default is ``SystemClipboard`` (`UIPasteboard.general`); elsewhere there is none
/// unless you pass one to `configure`.
public protocol SvcClipboard: Sendable {
    /// Whether the clipboard holds text. It must not show the system's paste prompt
    /// (`UIPasteboard`'s `hasStrings` does not), since the SDK asks it before every read.
    func hasStrings() async -> Bool

    /// The clipboard's text. May show the system's paste prompt and wait for the user: the SDK
    /// gives up after 30 s and reports the install without a click token.
    func string() async throws -> String?
}

/// A click token as the link's install page copies it: `svc_` and then ASCII letters, digits,
/// `_` and `-` only. Any other text the user copied stays on the device, never sent nor logged.
enum ClickToken {
    static let prefix = "svc_"

    /// The click token `text` holds once trimmed, or `nil`.
    static func find(in text: String?) -> String? {
        guard let token = text?.trimmed, token.hasPrefix(prefix), token.utf8.count > prefix.utf8.count else { return nil }
        let allowed = token.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F || byte == 0x2D
        }
        return allowed ? token : nil
    }
}
