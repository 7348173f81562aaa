"""Writes the daemon's function order for lld's --symbol-ordering-file (see scripts/link-order).

Arguments: the linker map of the release daemon, then callgrind output files of the daemon's runs, each profile of
a hot path after `--path` (made with --dump-instr=yes; `--mqtt-path` for a path whose messages come from the broker
rather than the bus). Prints the functions the runs executed, keeping only names the linker can place without
dragging cold code along: first the functions each hot path runs for every message, path after path; then the rest
in sections of their own, most called first; then those in shared sections, hottest (own cost) first; then every
protocol conformance descriptor.

A path's functions go together because a message at a low rate finds them cold: the processor fetches code it runs
in sequence ahead of use, and a line at a time where the code is spread. Laid out among the other paths' functions
(most called first over every run), the code a repeated advertisement runs sat on 26 pages of the binary and a
notification's on 41; path by path, on 16 and 25, and the daemon spent about 3 % less CPU per advertisement.

A shared section placed among the functions of their own would spread them apart, and what a value runs should sit
on as few pages as it can (each page it touches is a TLB entry, which a wake-up after a pause finds gone). A name is
placed when each of its definitions (local copies of one helper in many files) sits in a small section, or in a
large section (a whole file's or library's code, built without function sections) that the runs touch throughout:
ordering a name moves its whole section into the hot part, so a large section of which the runs touch a few
functions stays where it is, costing those few pages. A path takes only functions alone in their sections.

Protocol conformance descriptors (mangled names ending in `Mc`) are read together: the first lookup of a
conformance (a generic call, an `as?` cast, a Codable container) walks every descriptor in the binary. Gathered,
the 5,700 of them take 0.4 MiB at the start of .rodata instead of a few bytes on most of its pages.
"""
import collections
import re
import sys

import code_footprint

# The kernel maps code around each fault in windows of 64 KiB. A section smaller than a window costs no more in the
# hot part than where it is; a larger one whose windows are mostly touched is resident anyway and belongs there too.
WINDOW = 64 * 1024
LARGE_SECTION = WINDOW
DENSE = 0.5
# A section this small holds one function (or a few helpers): the code of a module built with function sections.
OWN_SECTION = 4096
MAP_LINE = re.compile(r"\s*([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+(\d+)\s(\s*)(.*)")


def map_symbols(map_path):
    """(output section, input section address, input section size, symbol name, symbol address) per symbol.

    The map must be written with --no-demangle, so that its names are those callgrind reports."""
    output_section = None
    section = None
    for line in open(map_path, errors="replace"):
        match = MAP_LINE.match(line)
        if not match:
            continue
        indent = len(match.group(5))
        name = match.group(6).strip()
        address = int(match.group(1), 16)
        if indent == 0:
            output_section = name
        elif indent == 8:
            section = (address, int(match.group(3), 16))
        elif indent == 16 and section is not None:
            yield output_section, section[0], section[1], name, address


def sections_by_symbol(map_path):
    """Symbol name -> [(section address, section size, symbol address)] of the .text input sections defining it."""
    sections = collections.defaultdict(list)
    for output_section, section_address, size, name, address in map_symbols(map_path):
        if output_section == ".text":
            sections[name].append((section_address, size, address))
    return sections


def conformance_descriptors(map_path):
    """Names of the protocol conformance descriptors outside .text, in map order."""
    return [
        name
        for output_section, _, _, name, _ in map_symbols(map_path)
        if output_section != ".text" and name.startswith("$s") and name.endswith("Mc")
    ]


def executed_functions(callgrind_paths):
    """(function name -> own cost, function name -> calls), over every run, for functions of the gattway binary."""
    cost = collections.Counter()
    calls = collections.Counter()
    for path in callgrind_paths:
        in_binary = False
        function = None
        callee = None
        callee_in_binary = False
        skip_next = False
        for line in open(path, errors="replace"):
            if skip_next:
                skip_next = False
                continue
            if line.startswith("ob="):
                in_binary = line[3:].strip().endswith("/gattway")
                callee_in_binary = in_binary
            elif line.startswith("cob="):
                callee_in_binary = line[4:].strip().endswith("/gattway")
            elif line.startswith("fn="):
                # callgrind marks recursion depth with a quote (f'2); unnamed code appears as 0x… addresses.
                name = line[3:].strip().split("'")[0]
                function = name if in_binary and not name.startswith("0x") else None
                callee_in_binary = in_binary
                if function:
                    cost[function] += 0
            elif line.startswith("cfn="):
                callee = line[4:].strip().split("'")[0]
            elif line.startswith("calls="):
                skip_next = True  # the next line is the call's inclusive cost, not this function's own
                if callee_in_binary and callee and not callee.startswith("0x"):
                    calls[callee] += int(line[6:].split()[0])
                callee_in_binary = in_binary
            elif function and line[:1].isdigit():
                fields = line.split()
                if len(fields) >= 2 and fields[1].isdigit():
                    cost[function] += int(fields[1])
    return cost, calls


# What counts a path's messages: the calls of a function that runs once per message (the executions of its first
# instruction). On the bus, the connection's delivery of a signal to its taps and streams, which every signal passes,
# whether libdbus dispatched it or the relay took it in place (libdbus's dispatch runs only for what the relay hands
# it, in a steady advertisement or value stream nearly nothing); from the broker, libmosquitto's read of its socket,
# once per message at the profiles' 100 messages/s.
MESSAGE_COUNTERS = {
    "--path": ("/gattway", "$s4DBus0A10ConnectionC13deliverSignalyyAA0aD7MessageV_AA0aE6FieldsVztF"),
    "--mqtt-path": ("libmosquitto", "mosquitto_loop_read"),
}


def path_functions(profile, counter):
    """The daemon's functions that ran for at least half the messages of a steady-state profile made with
    --dump-instr=yes (start-up left out: its loops run some instructions thousands of times): those with an
    instruction executed that often. The messages are counted by `counter`, a (library, function) of
    MESSAGE_COUNTERS. The order is the current layout's."""
    counts, function_of = code_footprint.executions(profile)
    library, function = counter
    calls = [
        (address, count)
        for (obj, address), count in counts.items()
        if obj and library in obj and function_of[(obj, address)].split("'")[0] == function
    ]
    if not calls:
        sys.exit(f"link_order: {profile} never ran {function}; is it a profile of that kind of path?")
    minimum = min(calls)[1] // 2
    first_address = {}
    for (obj, address), count in counts.items():
        if count >= minimum and obj and obj.endswith("/gattway"):
            name = function_of[(obj, address)].split("'")[0]
            if not name.startswith("0x"):
                first_address[name] = min(first_address.get(name, address), address)
    return sorted(first_address, key=first_address.get)


def main():
    sections = sections_by_symbol(sys.argv[1])
    arguments = sys.argv[2:]
    path_profiles = [
        (arguments[i + 1], MESSAGE_COUNTERS[argument])
        for i, argument in enumerate(arguments)
        if argument in MESSAGE_COUNTERS
    ]
    profiles = [
        a
        for i, a in enumerate(arguments)
        if a not in MESSAGE_COUNTERS and (i == 0 or arguments[i - 1] not in MESSAGE_COUNTERS)
    ]
    cost, calls = executed_functions(profiles)
    touched = collections.defaultdict(set)  # large section address -> windows the runs touch in it
    for name in cost:
        for section_address, size, address in sections.get(name, []):
            if size >= LARGE_SECTION:
                touched[section_address].add((address - section_address) // WINDOW)

    def placeable(section_address, size):
        return size < LARGE_SECTION or len(touched[section_address]) * WINDOW >= DENSE * size

    def own_sections(name):
        return all(size <= OWN_SECTION for _, size, _ in sections[name])

    hottest_first = sorted(cost.items(), key=lambda item: (-item[1], item[0]))
    placed = [
        name
        for name, _ in hottest_first
        if sections.get(name) and all(placeable(address, size) for address, size, _ in sections[name])
    ]
    # Those in sections of their own go most called first: what runs for every value, notification or report
    # comes before what runs once at start, however costly that is.
    own = sorted((name for name in placed if own_sections(name)), key=lambda name: -calls[name])
    # Only functions alone in their sections (Gattway's modules are built with one section per function, however
    # long): a shared section would bring its whole file's code into the path.
    symbols_in = collections.Counter(address for definitions in sections.values() for address, _, _ in definitions)
    path_candidates = {name for name in placed if all(symbols_in[address] == 1 for address, _, _ in sections[name])}
    paths = []
    for profile, counter in path_profiles:
        paths += [name for name in path_functions(profile, counter) if name in path_candidates and name not in paths]
    first = set(paths)
    for name in paths + [name for name in own + [n for n in placed if not own_sections(n)] if name not in first]:
        print(name)
    for name in conformance_descriptors(sys.argv[1]):
        print(name)


main()
