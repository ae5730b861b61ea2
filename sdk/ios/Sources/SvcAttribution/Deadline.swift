/// Waits `nanoseconds`; `Task.sleep(nanoseconds:)` by default, a test's own clock in tests.
typealias Sleep = @Sendable (_ nanoseconds: UInt64) async throws -> Void

/// How a time-limited piece of work ended.
enum Raced<Value: Sendable>: Sendable {
    case finished(Value)
    case timedOut
}

/// Runs `work`, and answers `.timedOut` once `seconds` pass without it finishing. The work is then
/// cancelled and never awaited: a read held by the paste prompt, or a server that never answers,
/// cannot hold the install (or the purchases behind it) any longer.
func race<Value: Sendable>(_ work: @escaping @Sendable () async -> Value, within seconds: Double, sleep: @escaping Sleep) async -> Raced<Value> {
    await withCheckedContinuation { continuation in
        let outcome = FirstOutcome(continuation)
        let worker = Task { await outcome.settle(.finished(await work())) }
        let timer = Task {
            // A sleep that throws was cancelled: the work finished first.
            guard (try? await sleep(UInt64(seconds * 1_000_000_000))) != nil else { return }
            if await outcome.settle(.timedOut) { worker.cancel() }
        }
        Task {
            _ = await worker.value
            timer.cancel()
        }
    }
}

/// Resumes the continuation with whichever outcome comes first.
private actor FirstOutcome<Value: Sendable> {
    private var continuation: CheckedContinuation<Raced<Value>, Never>?

    init(_ continuation: CheckedContinuation<Raced<Value>, Never>) {
        self.continuation = continuation
    }

    /// True when `outcome` came first.
    @discardableResult
    func settle(_ outcome: Raced<Value>) -> Bool {
        guard let continuation else { return false }
        self.continuation = nil
        continuation.resume(returning: outcome)
        return true
    }
}
