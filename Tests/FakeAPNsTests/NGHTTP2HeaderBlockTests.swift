import Testing

@testable import FakeAPNs

/// A request header block read field by field, as nghttp2 hands it over.
@Suite struct NGHTTP2HeaderBlockTests {
    func add(_ block: inout NGHTTP2HeaderBlock, stream: Int32, _ name: String, _ value: String)
        -> NGHTTP2HeaderBlock.Added
    {
        Array(name.utf8).withUnsafeBufferPointer { name in
            Array(value.utf8).withUnsafeBufferPointer { value in
                block.add(stream: stream, name: name, value: value)
            }
        }
    }

    /// Where a string's bytes are: two strings sharing storage give the same address.
    func storage(_ string: String) -> UnsafePointer<UInt8>? {
        string.utf8.withContiguousStorageIfAvailable { $0.baseAddress } ?? nil
    }

    @Test func aBlockIsTheFieldsOfItsStreamInOrder() {
        var block = NGHTTP2HeaderBlock(limit: 16_384)
        block.begin(stream: 1)
        let method = add(&block, stream: 1, ":method", "POST")
        let other = add(&block, stream: 3, "apns-topic", "other")
        let topic = add(&block, stream: 1, "apns-topic", "com.example.app")
        #expect(method == .added && topic == .added)
        #expect(other == .ignored, "not the block being read")
        let fields = block.finish(stream: 1)
        #expect(fields?.map { "\($0.name)=\($0.value)" } == [":method=POST", "apns-topic=com.example.app"])
        let again = block.finish(stream: 1)
        #expect(again == nil, "finished once")
        let late = add(&block, stream: 1, "late", "x")
        #expect(late == .ignored)
    }

    @Test func aFieldRepeatedOnALaterRequestSharesItsStrings() {
        var block = NGHTTP2HeaderBlock(limit: 16_384)
        let token = "bearer " + String(repeating: "eyJhbGciOiJFUzI1NiJ9", count: 10)
        block.begin(stream: 1)
        _ = add(&block, stream: 1, "authorization", token)
        let first = block.finish(stream: 1)!.first { $0.name == "authorization" }!.value
        block.begin(stream: 3)
        _ = add(&block, stream: 3, "authorization", token)
        let second = block.finish(stream: 3)!.first { $0.name == "authorization" }!.value
        #expect(first == token && second == token)
        #expect(storage(first) != nil)
        #expect(storage(first) == storage(second))
        block.begin(stream: 5)
        _ = add(&block, stream: 5, "authorization", token + "x")
        let third = block.finish(stream: 5)!.first { $0.name == "authorization" }!.value
        #expect(third == token + "x" && storage(third) != storage(first))
    }

    /// Reads `fields` as the whole block of `stream`.
    func read(
        _ block: inout NGHTTP2HeaderBlock, stream: Int32, _ fields: [(String, String)]
    ) -> [(name: String, value: String)] {
        block.begin(stream: stream)
        for (name, value) in fields { _ = add(&block, stream: stream, name, value) }
        return block.finish(stream: stream)!
    }

    /// Fields in another order than the last block's are still found among the connection's earlier ones.
    @Test func aFieldSharesItsStringsInAnyOrder() {
        var block = NGHTTP2HeaderBlock(limit: 16_384)
        let topic = ("apns-topic", "com.example.app.with.a.long.topic")
        let path = (":path", "/3/device/" + String(repeating: "ab", count: 32))
        let first = read(&block, stream: 1, [path, topic])
        let second = read(&block, stream: 3, [topic, path])
        #expect(second.map(\.name) == ["apns-topic", ":path"])
        #expect(storage(second[0].value) == storage(first[1].value))
        #expect(storage(second[1].value) == storage(first[0].value))
        // Then in the same order again, found at their places.
        let third = read(&block, stream: 5, [topic, path])
        #expect(
            storage(third[0].value) == storage(first[1].value) && storage(third[1].value) == storage(first[0].value))
    }

    /// A name repeated with two values: the connection remembers only the newest value for a name, and
    /// the older one is still shared, found at its place in the last block.
    @Test func aRepeatedNameSharesBothValues() {
        var block = NGHTTP2HeaderBlock(limit: 16_384)
        let fields = [
            ("x-repeated", "first value, longer than a small string"),
            ("x-repeated", "second value, longer than a small string"),
        ]
        let one = read(&block, stream: 1, fields)
        let two = read(&block, stream: 3, fields)
        #expect(two.map(\.value) == fields.map(\.1))
        #expect(storage(two[0].value) == storage(one[0].value))
        #expect(storage(two[1].value) == storage(one[1].value))
    }

    /// Where a list's fields are: two blocks sharing one list give the same address.
    func storage(_ fields: [(name: String, value: String)]) -> UnsafeRawPointer? {
        fields.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    }

    /// A block equal to the last one, field for field, is the last one's list; a block that differs in a
    /// value, has a field fewer or one more is a list of its own, its equal fields still shared.
    @Test(arguments: [
        ([(":method", "POST"), (":path", "/3/device/ab"), ("apns-topic", "com.example.app")], true),
        ([(":method", "POST"), (":path", "/3/device/cd"), ("apns-topic", "com.example.app")], false),
        ([(":method", "POST"), (":path", "/3/device/ab")], false),
        ([(":method", "POST"), (":path", "/3/device/ab"), ("apns-topic", "com.example.app"), ("apns-id", "x")], false),
        ([(":path", "/3/device/ab"), (":method", "POST"), ("apns-topic", "com.example.app")], false),
    ])
    func aBlockEqualToTheLastOneIsItsList(next: [(String, String)], shared: Bool) {
        var block = NGHTTP2HeaderBlock(limit: 16_384)
        let first = read(
            &block, stream: 1, [(":method", "POST"), (":path", "/3/device/ab"), ("apns-topic", "com.example.app")])
        let second = read(&block, stream: 3, next)
        #expect(second.map { "\($0.name)=\($0.value)" } == next.map { "\($0.0)=\($0.1)" })
        #expect((storage(second) == storage(first)) == shared)
        // And the block after a list of its own is compared with that one.
        let third = read(&block, stream: 5, next)
        #expect(storage(third) == storage(second))
    }

    @Test func aNameOutsideASCIIIsKeptWithQuestionMarksForTheCheckToRefuse() {
        var block = NGHTTP2HeaderBlock(limit: 16_384)
        block.begin(stream: 1)
        _ = add(&block, stream: 1, "apns-t\u{e9}pic", "x")
        let fields = block.finish(stream: 1)!
        #expect(fields.map(\.name) == ["apns-t??pic"])
        #expect(RequestHeaderCheck.problem(fields, trailers: false) != nil)
    }

    @Test func aBlockOverTheLimitEndsIt() {
        var block = NGHTTP2HeaderBlock(limit: 100)
        block.begin(stream: 1)
        // 32 + 1 + 40 = 73, then 146: over 100.
        let first = add(&block, stream: 1, "a", String(repeating: "v", count: 40))
        let second = add(&block, stream: 1, "b", String(repeating: "v", count: 40))
        #expect(first == .added && second == .overLimit)
        let fields = block.finish(stream: 1)
        #expect(fields == nil)
    }
}
