import Foundation

extension ArgumentScanner {
    /// A " (did you mean 'x'?)" hint naming the candidate nearest to `word`, or `""` when none is close.
    static func suggestion(for word: String, among candidates: [String]) -> String {
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(word, candidate)
            if distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
        }
        guard let best else { return "" }
        let limit = max(1, min(3, best.candidate.count / 3))
        let isPrefix = word.count >= 3 && best.candidate.hasPrefix(word)
        return best.distance <= limit || isPrefix ? " (did you mean '\(best.candidate)'?)" : ""
    }

    /// The Levenshtein distance between two strings, in characters.
    static func editDistance(_ lhs: String, _ rhs: String) -> Int {
        let left = Array(lhs)
        let right = Array(rhs)
        guard !left.isEmpty else { return right.count }
        guard !right.isEmpty else { return left.count }
        var previous = Array(0...right.count)
        var current = previous
        for i in 1...left.count {
            current[0] = i
            for j in 1...right.count {
                let substitution = previous[j - 1] + (left[i - 1] == right[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[right.count]
    }
}

/// `text` quoted for a POSIX shell when it needs to be.
func shellQuoted(_ text: String) -> String {
    let plain =
        !text.isEmpty
        && text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                    || "-_./:=@%+,".unicodeScalars.contains(scalar))
        }
    if plain { return text }
    return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}
