"""Reads a zip archive with Python's zipfile, an independent reader: checks every CRC and
prints each member's name and UTF-8 text as JSON [[name, text], ...] in archive order.
Used by the SGF archive's unit test (src/tournament/exchange/zip.rs) and tests/tournament.rs."""
import json
import sys
import zipfile

z = zipfile.ZipFile(sys.argv[1])
assert z.testzip() is None
print(json.dumps([[i.filename, z.read(i).decode()] for i in z.infolist()]))
