import CFramescopeStack

extension IdleClassifier {
    /// A classifier that names functions with the dynamic loader (`dladdr`, through
    /// `fs_symbol_name`): the nearest exported symbol at or below the address, which for a
    /// system call's wrapper is the wrapper itself.
    static let loader = IdleClassifier { address in
        fs_symbol_name(UInt(truncatingIfNeeded: address)).map { String(cString: $0) }
    }
}
