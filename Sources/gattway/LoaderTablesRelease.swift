import Logging
import ProcessMemory

/// The daemon drops its libraries' dynamic-linking tables from its resident set (`LoaderTables`) twice: as it starts,
/// so that they are no part of its peak, and once ready, because the libraries that bind lazily (libstdc++,
/// libmosquitto) read some of them again on each function's first call while the daemon connects. Every library is
/// loaded before `main` and the daemon itself is bound at start (`-z now`), so nothing else reads them.
enum LoaderTablesRelease {
    static func drop(when moment: String, logger: Logger) {
        do {
            let released = try LoaderTables.release()
            logger.debug(
                "dropped the libraries' dynamic-linking tables from memory",
                metadata: [
                    "when": "\(moment)", "libraries": "\(released.libraries)", "KiB": "\(released.bytes / 1024)",
                ])
        } catch {
            // Only memory is at stake: the daemon runs on with the tables resident.
            logger.warning("could not drop the libraries' dynamic-linking tables: \(error)")
        }
    }
}
