import NIOCore

/// Splits the device socket's byte stream into lines, the framing of device protocol v1.
struct LineFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer
    /// A line longer than this is a broken peer, not a message.
    static let maximumLineLength = 4 * 1024 * 1024

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > Self.maximumLineLength { throw LineTooLong() }
            return .needMoreData
        }
        let length = newline - buffer.readerIndex
        let line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        context.fireChannelRead(wrapInboundOut(line))
        return .continue
    }
}

extension LineFrameDecoder {
    /// A peer sent more than ``maximumLineLength`` bytes without a newline.
    struct LineTooLong: Error, CustomStringConvertible {
        var description: String { "a line longer than \(LineFrameDecoder.maximumLineLength) bytes without a newline" }
    }
}
