import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small HTTP/1.1 server on 127.0.0.1 for the tests of the real URLSession transport: each
/// request gets the reply its handler chooses (an answer, silence, or a dropped connection).
final class LoopbackServer: @unchecked Sendable {
    struct Request: Sendable {
        let method: String
        let path: String
        let body: Data

        var json: Json { (try? Json.parse(body)) ?? .null }
    }

    enum Reply: Sendable {
        case answer(status: Int, body: String)
        /// Keeps the connection open and never answers.
        case silence
        /// Closes the connection without answering.
        case hangUp
    }

    let port: UInt16
    var url: URL {
        // 127.0.0.1 and a port always make a URL.
        URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/")
    }

    private let listener: Int32
    private let handler: @Sendable (Request) -> Reply
    private let state = Locked(State())

    private struct State {
        var requests: [Request] = []
        var held: [Int32] = []
        /// Connections the client closed while the server held them open.
        var closedByClient = 0
        var stopped = false
    }

    init(handler: @escaping @Sendable (Request) -> Reply) throws {
        self.handler = handler
        let fd = Self.tcpSocket()
        guard fd >= 0 else { throw FakeFailure(what: "socket") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw FakeFailure(what: "bind")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Every request received so far, in order.
    var requests: [Request] { state.current.requests }
    var closedByClient: Int { state.current.closedByClient }

    /// Stops listening and ends every connection it holds. Each descriptor is closed by the
    /// thread that owns it, never from here: a number closed twice could be another test's socket.
    func stop() {
        state.withValue { state in
            state.stopped = true
            state.held.forEach { _ = shutdown($0, Int32(SHUT_RDWR)) }
        }
    }

    static func tcpSocket() -> Int32 {
        #if canImport(Glibc)
        socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        socket(AF_INET, SOCK_STREAM, 0)
        #endif
    }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptLoop() {
        // Polls, so that the loop sees `stop()` and closes the listener itself.
        var descriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        while !state.current.stopped {
            guard poll(&descriptor, 1, 20) > 0 else { continue }
            let connection = accept(listener, nil, nil)
            if connection >= 0 { Thread { [self] in serve(connection) }.start() }
        }
        close(listener)
    }

    private func serve(_ connection: Int32) {
        guard let request = readRequest(connection) else {
            close(connection)
            return
        }
        state.withValue { $0.requests.append(request) }
        switch handler(request) {
        case .answer(let status, let body):
            let bytes = Array(body.utf8)
            let head = "HTTP/1.1 \(status) Status\r\nContent-Type: application/json\r\nContent-Length: \(bytes.count)\r\nConnection: close\r\n\r\n"
            write(connection, Array(head.utf8) + bytes)
            close(connection)
        case .hangUp:
            close(connection)
        case .silence:
            let stopped = state.withValue { state -> Bool in
                if !state.stopped { state.held.append(connection) }
                return state.stopped
            }
            if stopped {
                close(connection)
                return
            }
            // Wait for the client to give up (or for stop()): recv answers 0 once the connection ends.
            var byte: UInt8 = 0
            _ = recv(connection, &byte, 1, 0)
            state.withValue { state in
                if !state.stopped { state.closedByClient += 1 }
                state.held.removeAll { $0 == connection }
                close(connection)
            }
        }
    }

    private func readRequest(_ connection: Int32) -> Request? {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var headerEnd: Int?
        var contentLength = 0
        while true {
            if let end = headerEnd, buffer.count >= end + contentLength { break }
            let count = recv(connection, &chunk, chunk.count, 0)
            if count <= 0 { return nil }
            buffer += chunk[0..<count]
            if headerEnd == nil, let range = Self.find([13, 10, 13, 10], in: buffer) {
                headerEnd = range
                let head = String(decoding: buffer[0..<range], as: UTF8.self)
                let field = "content-length:"
                for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix(field) {
                    contentLength = Int(line.dropFirst(field.count).trimmingCharacters(in: .whitespaces)) ?? 0
                }
            }
        }
        guard let end = headerEnd else { return nil }
        let requestLine = String(decoding: buffer[0..<end], as: UTF8.self).split(separator: "\r\n").first ?? ""
        let parts = requestLine.split(separator: " ")
        guard parts.count >= 2 else { return nil }
        return Request(method: String(parts[0]), path: String(parts[1]), body: Data(buffer[end..<(end + contentLength)]))
    }

    /// The index just past the first `pattern` in `bytes`.
    private static func find(_ pattern: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        for start in 0...(bytes.count - pattern.count) where Array(bytes[start..<(start + pattern.count)]) == pattern {
            return start + pattern.count
        }
        return nil
    }

    // A client that went away must not kill the test process with SIGPIPE.
    #if canImport(Glibc)
    private static let sendFlags = Int32(MSG_NOSIGNAL)
    #else
    private static let sendFlags: Int32 = 0
    #endif

    private func write(_ connection: Int32, _ bytes: [UInt8]) {
        #if canImport(Darwin)
        var on: Int32 = 1
        setsockopt(connection, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Self.sendFlags) }
            if count <= 0 { return }
            sent += count
        }
    }
}

/// A port on 127.0.0.1 bound but not listening: a connection to it is refused. Held until
/// `close()`, so that no other test's server takes it meanwhile.
final class RefusingPort: Sendable {
    let url: URL
    private let socketFD: Int32

    init() throws {
        let fd = LoopbackServer.tcpSocket()
        var address = LoopbackServer.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard fd >= 0, bound, let url = URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))") else {
            throw FakeFailure(what: "bind")
        }
        socketFD = fd
        self.url = url
    }

    func close() {
        #if canImport(Glibc)
        _ = Glibc.close(socketFD)
        #else
        _ = Darwin.close(socketFD)
        #endif
    }
}
