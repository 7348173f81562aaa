extension JSONValue {
    /// The number as a Double, for numbers only.
    package var doubleValue: Double? {
        if case .number(let text) = self { return Double(text) }
        return nil
    }

    package var isObject: Bool {
        if case .object = self { return true }
        return false
    }
}
