import Foundation

// `harness-fuzzer <target> …`. Built with `-sanitize=fuzzer -DFUZZING` (ci/fuzz) it is libFuzzer
// aimed at the target, the other arguments libFuzzer's; built normally it replays the files and
// folders given, so an input that crashed once stays a regression test (FuzzCorpusTests).

let arguments = CommandLine.arguments
guard arguments.count > 1, let target = FuzzTarget(rawValue: arguments[1]) else {
    let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
    FileHandle.standardError.write(Data("usage: harness-fuzzer <target> [inputs…]; targets: \(names)\n".utf8))
    exit(2)
}

#if FUZZING
// swift-format-ignore: AlwaysUseLowerCamelCase
// (libFuzzer's C entry point: its name is fixed)
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

nonisolated(unsafe) var chosen = target
// libFuzzer sees the program name and its own arguments: the target's name is taken out.
var driverArguments = [arguments[0]] + arguments.dropFirst(2)
var pointers: [UnsafeMutablePointer<CChar>?] = driverArguments.map { strdup($0) } + [nil]
var count = CInt(driverArguments.count)
let status = pointers.withUnsafeMutableBufferPointer { buffer -> CInt in
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = buffer.baseAddress
    return LLVMFuzzerRunDriver(&count, &argv) { start, size in
        guard let start else { return 0 }
        chosen.run(Array(UnsafeBufferPointer(start: start, count: size)))
        return 0
    }
}
exit(status)
#else
var files: [URL] = []
for path in arguments.dropFirst(2) {
    var isDirectory: ObjCBool = false
    _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
    if isDirectory.boolValue {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        files += names.sorted().map { URL(fileURLWithPath: path).appendingPathComponent($0) }
    } else {
        files.append(URL(fileURLWithPath: path))
    }
}
for file in files {
    guard let data = try? Data(contentsOf: file) else {
        FileHandle.standardError.write(Data("cannot read \(file.path)\n".utf8))
        exit(1)
    }
    target.run(Array(data))
}
print("replayed \(files.count) inputs")
#endif
