#!/usr/bin/env python3
"""The code a program runs on (nearly) every value, from a callgrind profile made with --dump-instr=yes.

    scripts/code_footprint.py PROFILE MINIMUM [FUNCTIONS]
    scripts/code_footprint.py --calls PROFILE PATTERN

Counts the instruction addresses executed at least MINIMUM times in the profile's window (scripts/callgrind-per-value
passes 90% of the values in it), and the 64-byte cache lines and 4 KiB pages they fall in, per object file. At a low
rate every value finds the code cold, so each line it runs is a fetch from memory: the lines, more than the
instructions, set what a value costs there. With FUNCTIONS, the functions with the most such lines are listed too.
With --calls it prints how many calls the window made into functions whose name matches PATTERN (a regular expression,
searched for in the mangled name; anchor it so that closures and specialisations of the function are left out): the
count of values when one function runs once per value, for a program that callgrind slows below the rate it was sent
values at.
"""
import collections
import re
import sys


def resolve(table, text):
    """A name of a compressed profile: "(id) name" defines it, "(id)" refers back."""
    match = re.match(r"\((\d+)\)(?: (.*))?", text)
    if not match:
        return text
    if match.group(2) is not None:
        table[match.group(1)] = match.group(2)
    return table.get(match.group(1), text)


def executions(path):
    """Times each (object, address) ran, and the function of each address."""
    objects, functions = {}, {}
    counts = collections.Counter()
    function_of = {}
    positions = 1
    current = [0]
    obj = function = None
    call_cost_next = False
    with open(path, errors="replace") as profile:
        for line in profile:
            line = line.rstrip("\n")
            if line.startswith("positions:"):
                positions = len(line.split()[1:])
                current = [0] * positions
            elif line.startswith("ob="):
                obj = resolve(objects, line[3:])
            elif line.startswith("fn="):
                function = resolve(functions, line[3:])
            elif line.startswith("cob="):
                resolve(objects, line[4:])
            elif line.startswith("cfn="):
                resolve(functions, line[4:])
            elif line.startswith("calls="):
                call_cost_next = True
            elif line and (line[0].isdigit() or line[0] in "+-*"):
                fields = line.split()
                if len(fields) <= positions:
                    continue
                for index in range(positions):
                    field = fields[index]
                    if field == "*":
                        continue
                    if field[0] in "+-":
                        current[index] += int(field, 0)
                    else:
                        current[index] = int(field, 0)
                # The line after calls= holds the call's inclusive cost, not the instruction's own executions.
                if call_cost_next:
                    call_cost_next = False
                    continue
                key = (obj, current[0])
                counts[key] += int(fields[positions])
                function_of[key] = function
    return counts, function_of


def calls_into(path, pattern):
    """Calls made in the profile into functions whose mangled name matches `pattern` (searched for)."""
    matcher = re.compile(pattern)
    functions = {}
    callee = None
    total = 0
    with open(path, errors="replace") as profile:
        for line in profile:
            if line.startswith("cfn="):
                callee = resolve(functions, line[4:].rstrip("\n"))
            elif line.startswith("fn="):
                resolve(functions, line[3:].rstrip("\n"))
            elif line.startswith("calls=") and callee is not None and matcher.search(callee):
                total += int(line[6:].split()[0])
    return total


def main():
    if sys.argv[1] == "--calls":
        print(calls_into(sys.argv[2], sys.argv[3]))
        return
    path, minimum = sys.argv[1], int(sys.argv[2])
    listed = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    counts, function_of = executions(path)
    addresses = collections.defaultdict(set)
    by_function = collections.defaultdict(set)
    for (obj, address), count in counts.items():
        if count >= minimum:
            addresses[obj].add(address)
            by_function[(obj, function_of[(obj, address)])].add(address >> 6)
    total_instructions = total_lines = total_pages = 0
    for obj, found in sorted(addresses.items(), key=lambda item: -len(item[1])):
        lines = {address >> 6 for address in found}
        pages = {address >> 12 for address in found}
        total_instructions += len(found)
        total_lines += len(lines)
        total_pages += len(pages)
        print(f"  {len(found):6d} instructions {len(lines):5d} lines {len(pages):4d} pages  {obj.split('/')[-1]}")
    print(f"  {total_instructions:6d} instructions {total_lines:5d} lines {total_pages:4d} pages  in all")
    ranked = sorted(by_function.items(), key=lambda item: -len(item[1]))
    for (obj, function), lines in ranked[:listed]:
        print(f"  {len(lines):5d} lines  {function}  [{(obj or '?').split('/')[-1]}]")


if __name__ == "__main__":
    main()
