"""What the daemon links: FoundationEssentials, never the full Foundation with its ICU.

Full Foundation (libFoundation, FoundationInternationalization, _FoundationICU) added about 9 MiB of resident code
to the daemon; one `import Foundation` in a product module, or a dependency that needs it, brings it back. The
debug binary `scripts/test` builds links the Swift libraries dynamically, so `ldd` shows each of them; the release
binary carries the same modules statically.
"""

import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
FULL_FOUNDATION = ("libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so")


def linked_libraries(binary):
    assert binary.exists(), f"{binary} is missing: scripts/test builds it before the Python suites"
    listing = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in listing.splitlines() if line.strip()]


def test_the_daemon_links_foundation_essentials_only():
    libraries = linked_libraries(ROOT / ".build" / "debug" / "gattway")
    assert "libFoundationEssentials.so" in libraries, libraries
    assert not [name for name in libraries if name in FULL_FOUNDATION], libraries


def test_the_check_can_see_full_foundation():
    # The benchmark program imports Foundation: the same listing names it there, so the check above can fail.
    libraries = linked_libraries(ROOT / ".build" / "debug" / "gattway-bench")
    assert "libFoundation.so" in libraries, libraries
