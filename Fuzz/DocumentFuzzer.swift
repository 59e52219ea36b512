// libFuzzer entry point for the store file's parser (`Document.parse`) and the value validator
// (`Document.compactValue`).
//
// This file is compiled together with Sources/CodableDefaults/Internal/Document.swift and MemberName.swift into
// one module by Scripts/fuzz.sh (they use only the standard library and the C library), so it needs no package
// target:
//
//     swiftc -parse-as-library -sanitize=fuzzer,address -O -g Sources/CodableDefaults/Internal/Document.swift \
//         Sources/CodableDefaults/Internal/MemberName.swift Fuzz/DocumentFuzzer.swift -o document-fuzzer
//
// Beyond "does not crash, does not hang, no memory error", it checks properties every accepted input must
// have, and traps (so libFuzzer records the input) when one does not hold:
// - a parsed document serializes to a file that parses back to the same members, names byte for byte (two
//   canonically equivalent names, such as "\u00E9" and "e\u0301", stay two members with their own bytes);
// - every member value is compact: `compactValue` accepts it and returns it unchanged;
// - `compactValue` of any input is idempotent;
// - errors point inside the input: 0 <= offset <= count, line >= 1, column >= 1.

/// Stops the fuzzer with `message` when `condition` is false: the trap makes libFuzzer save the input.
@inline(never)
func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("DocumentFuzzer: property failed: \(message())") }
}

/// Checks that an error's position lies inside the input.
func checkPosition(_ error: DocumentError, count: Int) {
    require(error.offset >= 0 && error.offset <= count, "offset \(error.offset) outside 0...\(count)")
    require(error.line >= 1 && error.column >= 1, "position \(error.line):\(error.column)")
    require(!error.message.isEmpty, "empty message")
}

/// Runs every check on one input.
func fuzzOne(_ bytes: [UInt8]) {
    for maxDepth in [512, 4] {
        do {
            let members = try Document.parse(bytes, maxDepth: maxDepth)
            let written = Document.serialize(members)
            do {
                let reparsed = try Document.parse(written, maxDepth: maxDepth)
                require(reparsed == members, "serialize/parse round trip changed the members")
            } catch {
                require(false, "the serialized document does not parse: \(error.message)")
            }
            for member in members {
                do {
                    let compact = try Document.compactValue(member.value, maxDepth: maxDepth)
                    require(compact == member.value, "a member value is not compact")
                } catch {
                    require(false, "a member value does not validate: \(error.message)")
                }
            }
        } catch {
            checkPosition(error, count: bytes.count)
        }
        do {
            let compact = try Document.compactValue(bytes, maxDepth: maxDepth)
            do {
                let again = try Document.compactValue(compact, maxDepth: maxDepth)
                require(again == compact, "compactValue is not idempotent")
            } catch {
                require(false, "compactValue's output does not validate: \(error.message)")
            }
        } catch {
            checkPosition(error, count: bytes.count)
        }
    }
}

/// The libFuzzer entry point.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size == 0 || data == nil ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    fuzzOne(bytes)
    return 0
}
