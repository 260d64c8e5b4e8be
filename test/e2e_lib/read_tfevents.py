"""Reads a TensorBoard event file with the standard library only, as a check
on the runtime's writer that shares none of its code.

Run as: read_tfevents.py EVENTS_FILE
Verifies every TFRecord's length and data CRC-32C, decodes each Event and
prints one line per scalar: "STEP TAG VALUE" (VALUE as %.9g). The first
record must be the file_version "brain.Event:2". Exits 1 on the first error.
"""
import struct
import sys


def _crc32c_table():
    # CRC-32C (Castagnoli), reflected polynomial 0x82F63B78.
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _crc32c_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def records(blob):
    offset = 0
    while offset < len(blob):
        if offset + 12 > len(blob):
            fail(f"truncated record header at byte {offset}")
        header = blob[offset:offset + 8]
        (length,) = struct.unpack("<Q", header)
        (header_crc,) = struct.unpack("<I", blob[offset + 8:offset + 12])
        if header_crc != masked_crc32c(header):
            fail(f"bad length CRC at byte {offset}")
        start = offset + 12
        end = start + length
        if end + 4 > len(blob):
            fail(f"truncated record at byte {offset}")
        data = blob[start:end]
        (data_crc,) = struct.unpack("<I", blob[end:end + 4])
        if data_crc != masked_crc32c(data):
            fail(f"bad data CRC at byte {offset}")
        yield data
        offset = end + 4


def varint(data, pos):
    value = shift = 0
    while True:
        if pos >= len(data):
            fail("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def fields(data):
    """Yields (field number, wire type, value) of a protobuf message."""
    pos = 0
    while pos < len(data):
        key, pos = varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            length, pos = varint(data, pos)
            value, pos = data[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            fail(f"unsupported wire type {wire}")
        if pos > len(data):
            fail("truncated field")
        yield number, wire, value


def main():
    if len(sys.argv) != 2:
        fail("usage: read_tfevents.py EVENTS_FILE")
    with open(sys.argv[1], "rb") as f:
        blob = f.read()
    for index, data in enumerate(records(blob)):
        step, version, values = 0, None, []
        for number, wire, value in fields(data):
            if number == 1 and wire == 1:
                struct.unpack("<d", value)  # wall_time
            elif number == 2 and wire == 0:
                step = value - (1 << 64) if value >= 1 << 63 else value
            elif number == 3 and wire == 2:
                version = value.decode()
            elif number == 5 and wire == 2:
                for vnum, vwire, entry in fields(value):
                    if vnum != 1 or vwire != 2:
                        continue
                    tag, simple = None, None
                    for enum_, ewire, item in fields(entry):
                        if enum_ == 1 and ewire == 2:
                            tag = item.decode()
                        elif enum_ == 2 and ewire == 5:
                            (simple,) = struct.unpack("<f", item)
                    if tag is None or simple is None:
                        fail(f"record {index}: value without tag or scalar")
                    values.append((tag, simple))
        if index == 0 and version != "brain.Event:2":
            fail(f"first record is not file_version brain.Event:2: {version}")
        for tag, simple in values:
            print(f"{step} {tag} {simple:.9g}")


if __name__ == "__main__":
    main()
