import NIOCore
import NIOHTTP1
import Recording

extension ExchangeRecording {
    /// A body write, as handed to the connection.
    func write(_ buffer: ByteBuffer) {
        buffer.withUnsafeReadableBytes { write($0) }
    }

    /// A whole short reply: its head and its one body part.
    func record(_ parts: [HTTPServerResponsePart]) {
        for part in parts {
            switch part {
            case .head(let head):
                self.head(
                    status: Int(head.status.code), statusText: head.status.reasonPhrase, headers: Array(head.headers))
            case .body(.byteBuffer(let buffer)):
                write(buffer)
            case .body, .end:
                break
            }
        }
    }
}
