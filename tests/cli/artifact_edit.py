"""Reads and rewrites an .ait container with every hash recomputed (the
header's, the manifest's, the blob table's, each blob's and the sums file),
so that a test can build hostile but consistent artifacts: what the loader
must refuse by its meaning, not by a checksum. The layout is the one
src/io/artifact.h documents.

    a = load("x.ait"); a.manifest["buckets"] = [1, 1 << 29]; a.save("y.ait")
"""
import hashlib
import json
import os
import struct

HDR, ENTRY, ALIGN = 512, 256, 4096


class Artifact:
    def __init__(self, head, manifest, blobs):
        self.head = head          # header bytes 0..352 (magic, versions, CPU, model hash)
        self.manifest = manifest  # parsed JSON
        self.blobs = blobs        # [name, bytes], in order

    def blob(self, name):
        return next(b for b in self.blobs if b[0] == name)

    def save(self, path):
        man = json.dumps(self.manifest, indent=1).encode()
        tab_off = (HDR + len(man) + 7) & ~7
        pos = tab_off + ENTRY * len(self.blobs)
        table, body = b"", b""
        for name, data in self.blobs:
            off = (pos + ALIGN - 1) & ~(ALIGN - 1)
            body += bytes(off - pos) + data
            pos = off + len(data)
            table += name.encode().ljust(208, b"\0") + struct.pack("<QQ", off, len(data)) + \
                hashlib.sha256(data).digest()
        h = bytearray(self.head.ljust(HDR, b"\0")[:352])
        h += struct.pack("<QQ", HDR, len(man)) + hashlib.sha256(man).digest()
        h += struct.pack("<QQQ", tab_off, len(self.blobs), pos) + hashlib.sha256(table).digest()
        h += bytes(24)
        h += hashlib.sha256(bytes(h)).digest()
        h += bytes(HDR - len(h))
        out = bytes(h) + man + bytes(tab_off - HDR - len(man)) + table + body
        open(path, "wb").write(out)
        name = os.path.basename(path)
        sums = os.path.join(os.path.dirname(path), name[:-4] + "_sha256_sums.txt")
        open(sums, "w").write("%s  %s\n" % (hashlib.sha256(out).hexdigest(), name))


def load(path):
    f = open(path, "rb").read()
    man_off, man_len = struct.unpack_from("<QQ", f, 352)
    tab_off, count = struct.unpack_from("<QQ", f, 400)
    blobs = []
    for i in range(count):
        t = tab_off + i * ENTRY
        name = f[t:t + 208].rstrip(b"\0").decode()
        off, n = struct.unpack_from("<QQ", f, t + 208)
        blobs.append([name, f[off:off + n]])
    return Artifact(f[:352], json.loads(f[man_off:man_off + man_len]), blobs)
