"""Copies a TorchScript archive and flips one bit in the middle of a tensor
record's bytes, leaving the CRC-32 the central directory records for it.

    flip_tensor_byte.py IN.pt OUT.pt KEY [--add]

KEY names the record ARCHIVE/data/KEY. With --add, the record is first
appended as 64 zero bytes that no tensor refers to, so LibTorch never reads
it.
"""
import shutil
import sys
import zipfile

source, target, key = sys.argv[1:4]
shutil.copy(source, target)
if "--add" in sys.argv[4:]:
    with zipfile.ZipFile(target, "a") as archive:
        folder = archive.namelist()[0].split("/")[0]
        archive.writestr(f"{folder}/data/{key}", bytes(64))
with zipfile.ZipFile(target) as archive:
    info = next(i for i in archive.infolist()
                if i.filename.endswith(f"/data/{key}"))
assert info.compress_type == zipfile.ZIP_STORED and info.file_size > 0
with open(target, "r+b") as f:
    f.seek(info.header_offset + 26)
    name_size = int.from_bytes(f.read(2), "little")
    extra_size = int.from_bytes(f.read(2), "little")
    at = info.header_offset + 30 + name_size + extra_size + info.file_size // 2
    f.seek(at)
    byte = f.read(1)[0]
    f.seek(at)
    f.write(bytes([byte ^ 1]))
