// The only code that needs Apple's SDK (Linux cannot compile it): keep it short.
#if canImport(UIKit) && os(iOS)
import UIKit

/// `UIPasteboard.general`, the default clipboard on iOS.
///
/// `hasStrings` never shows the paste prompt. Reading the text may: from iOS 16 the system asks
/// the user to allow the paste, and the reading thread waits for the answer, so it is read on a
/// global queue, never on the main thread.
public struct SystemClipboard: SvcClipboard {
    /// The general pasteboard.
    public init() {}

    /// `UIPasteboard.general.hasStrings`, which shows no prompt.
    public func hasStrings() async -> Bool {
        await offMainThread { UIPasteboard.general.hasStrings }
    }

    /// `UIPasteboard.general.string`, read on a global queue: it may wait for the paste prompt.
    public func string() async throws -> String? {
        await offMainThread { UIPasteboard.general.string }
    }

    /// Runs `read` on a GCD thread, not the main thread nor Swift's cooperative pool, which a
    /// read held by the paste prompt would block.
    private func offMainThread<Value: Sendable>(_ read: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async { continuation.resume(returning: read()) }
        }
    }
}
#endif
