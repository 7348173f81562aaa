/// A plain table for people: a header and left-aligned columns separated by two spaces.
struct TextTable {
    let header: [String]
    var rows: [[String]] = []

    init(_ header: String...) { self.header = header }

    mutating func add(_ row: String...) { rows.append(row) }

    var rendered: String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            var line = ""
            for (column, cell) in row.enumerated() {
                let isLast = column == row.count - 1
                line += isLast ? cell : cell + String(repeating: " ", count: widths[column] - cell.count + 2)
            }
            // An empty last cell leaves the padding of the one before it: no trailing blanks.
            while line.last == " " { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }
}
