import Foundation
import Testing

@testable import FakeAPNs

/// The values the provider connection's two handlers pass each other.
@Suite struct ProviderStreamPartTests {
    /// `NIOAny` keeps a value of up to three words inline and boxes a larger one: a part that grew would
    /// cost every request an allocation a way up and another a way down.
    @Test func partsFitInlineInNIOAny() {
        #expect(MemoryLayout<ProviderStreamPart>.size <= 3 * MemoryLayout<Int>.size)
        #expect(MemoryLayout<ProviderOutboundPart>.size <= 3 * MemoryLayout<Int>.size)
    }

    @Test func outboundPartsNameTheirStream() {
        #expect(ProviderOutboundPart.head(fields: [(":status", "200")], stream: 3, end: true).stream == 3)
        #expect(ProviderOutboundPart.body(Data("{}".utf8), stream: 5).stream == 5)
        #expect(ProviderOutboundPart.reset(stream: 7).stream == 7)
        #expect(ProviderOutboundPart.maxConcurrentStreams(1000).stream == nil)
        #expect(ProviderOutboundPart.goAway(reason: "Shutdown").stream == nil)
    }

    /// Identifiers new in every answer are never indexed; the fields every answer repeats are.
    @Test func answerIdentifiersAreNotIndexed() {
        #expect(!NGHTTP2NameValues.isIndexed("apns-id"))
        #expect(!NGHTTP2NameValues.isIndexed("apns-unique-id"))
        #expect(NGHTTP2NameValues.isIndexed(":status"))
        #expect(NGHTTP2NameValues.isIndexed("content-type"))
    }
}
