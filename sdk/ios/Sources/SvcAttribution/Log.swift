/// Receives every failure the SDK contains (a network error, a refused request, storage that
/// cannot be read): a message for people, and the error behind it when there is one.
///
/// Messages never hold the clipboard's text. They may hold transaction IDs and the service's
/// error answers, so do not forward them to a third-party analytics service.
public typealias SvcLogHandler = @Sendable (_ message: String, _ error: (any Error)?) -> Void

/// The app's log handler, with the `svc:` prefix every message carries.
struct Log: Sendable {
    let handler: SvcLogHandler?

    func callAsFunction(_ message: String, _ error: (any Error)? = nil) {
        handler?("svc: \(message)", error)
    }
}
