"""ImageDecoder 20. The spec's examples (a 32x32 image of coloured tiles
encoded as BMP, JPEG 2000, JPEG in RGB, BGR and Grayscale, PNG, PPM, TIFF,
WebP) and cases for what they miss: every pixel_format, gray, palette,
alpha and 16-bit images, the Netpbm variants, and streams that cannot be
decoded (the spec's empty image, [0, 0, C]).

Images are encoded with Pillow and the expected pixels are Pillow's
decoding, as onnx's own test generator does (Pillow is an independent
decoder, using the same libjpeg defaults the spec asks for: smooth chroma
upsampling). Grayscale is Pillow's convert("L"), ITU-R 601-2 luma. Where
Pillow has no 8-bit answer (16-bit gray becomes mode I, which convert()
clips at 255) the expectation is numpy's: 16-bit samples keep their high
byte (PNG, as Pillow does for 16-bit RGB), Netpbm samples scale by
255 / maxval with rounding."""
import io

import numpy as np
from onnx import helper
from PIL import Image

from spec_case import case

FORMATS = {"RGB": "RGB", "BGR": "RGB", "Grayscale": "L"}


def tiles(h=32, w=32, tile=5, seed=12345):
    """An RGB image of random-coloured tiles (smooth areas and sharp edges)."""
    rng = np.random.RandomState(seed)
    img = np.zeros((h, w, 3), np.uint8)
    for y in range(0, h, tile):
        for x in range(0, w, tile):
            img[y:y + tile, x:x + tile] = rng.randint(0, 256, 3)
    return img


def encode(img, fmt, mode=None, **kw):
    im = Image.fromarray(img) if mode is None else Image.fromarray(img, mode)
    with io.BytesIO() as f:
        im.save(f, format=fmt, **kw)
        return f.getvalue()


def pillow(data, pixel_format):
    """What Pillow decodes from data, as ImageDecoder lays it out."""
    out = np.array(Image.open(io.BytesIO(data)).convert(FORMATS[pixel_format]))
    if pixel_format == "Grayscale":
        return out[:, :, np.newaxis]
    return out[:, :, ::-1] if pixel_format == "BGR" else out


def layout(rgb_or_gray, pixel_format):
    """Expected output from decoded pixels ([H, W] gray or [H, W, 3] RGB), numpy only."""
    a = rgb_or_gray.astype(np.int64)
    if a.ndim == 2:
        return (a[:, :, None] if pixel_format == "Grayscale" else np.repeat(a[:, :, None], 3, 2)).astype(np.uint8)
    if pixel_format == "Grayscale":
        return ((a[..., 0] * 19595 + a[..., 1] * 38470 + a[..., 2] * 7471 + 0x8000) >> 16)[..., None].astype(np.uint8)
    return (a[:, :, ::-1] if pixel_format == "BGR" else a).astype(np.uint8)


def decode_case(name, data, pixel_format, expected=None):
    node = helper.make_node("ImageDecoder", ["data"], ["output"], pixel_format=pixel_format)
    if expected is None:
        expected = pillow(data, pixel_format)
    case("image_decoder_" + name, node, {"data": np.frombuffer(data, np.uint8).copy()},
         {"output": np.ascontiguousarray(expected, np.uint8)}, opset=20)


img = tiles()
gray = np.array(Image.fromarray(img).convert("L"))

# The spec's examples.
decode_case("decode_bmp_rgb", encode(img, "bmp"), "RGB")
decode_case("decode_jpeg2k_rgb", encode(img, "jpeg2000"), "RGB")
for pf in ("BGR", "Grayscale", "RGB"):
    decode_case("decode_jpeg_" + pf.lower(), encode(img, "jpeg"), pf)
decode_case("decode_png_rgb", encode(img, "png"), "RGB")
decode_case("decode_pnm_rgb", encode(img, "ppm"), "RGB")
decode_case("decode_tiff_rgb", encode(img, "tiff"), "RGB")
decode_case("decode_webp_rgb", encode(img, "webp"), "RGB")

# Every pixel_format for the lossless formats, and lossless WebP.
for fmt, ext in (("bmp", "bmp"), ("png", "png"), ("tiff", "tiff"), ("ppm", "pnm"),
                 ("jpeg2000", "jpeg2k")):
    for pf in ("BGR", "Grayscale"):
        decode_case("%s_%s" % (ext, pf.lower()), encode(img, fmt), pf)
decode_case("webp_lossless_bgr", encode(img, "webp", lossless=True), "BGR", layout(img, "BGR"))
decode_case("webp_lossless_grayscale", encode(img, "webp", lossless=True), "Grayscale",
            layout(img, "Grayscale"))
# Odd sizes (row padding, partial JPEG blocks and chroma pairs), 4:2:0 and 4:4:4 JPEG.
odd = tiles(27, 19, 3, seed=7)
decode_case("bmp_odd_size_rgb", encode(odd, "bmp"), "RGB", odd)
decode_case("jpeg_odd_size_rgb", encode(odd, "jpeg", quality=90), "RGB")
decode_case("jpeg_444_rgb", encode(odd, "jpeg", subsampling=0), "RGB")
decode_case("jpeg_progressive_rgb", encode(img, "jpeg", progressive=True), "RGB")
decode_case("png_odd_size_rgb", encode(odd, "png"), "RGB", odd)

# Gray images: RGB copies the gray value, Grayscale keeps it.
for fmt, ext in (("png", "png"), ("bmp", "bmp"), ("jpeg", "jpeg"), ("tiff", "tiff"),
                 ("ppm", "pgm"), ("jpeg2000", "jpeg2k")):
    data = encode(gray, fmt, "L")
    for pf in ("RGB", "Grayscale"):
        decode_case("%s_gray_%s" % (ext, pf.lower()), data, pf)
# 1-bit images: PNG, BMP and raw PBM (P4; 1 is black there).
bits = (gray > 128)
bw = encode(bits, "png")
decode_case("png_1bit_rgb", bw, "RGB", layout(bits.astype(np.uint8) * 255, "RGB"))
decode_case("bmp_1bit_grayscale", encode(bits, "bmp"), "Grayscale",
            layout(bits.astype(np.uint8) * 255, "Grayscale"))
decode_case("pbm_grayscale", encode(bits, "ppm"), "Grayscale",
            layout(bits.astype(np.uint8) * 255, "Grayscale"))
# Palette images.
pal = Image.fromarray(img).quantize(16)
with io.BytesIO() as f:
    pal.save(f, format="png")
    decode_case("png_palette_rgb", f.getvalue(), "RGB")
with io.BytesIO() as f:
    pal.save(f, format="bmp")
    decode_case("bmp_palette_bgr", f.getvalue(), "BGR")
# Alpha is dropped (Pillow's convert("RGB") of RGBA).
alpha = np.dstack([img, np.arange(32 * 32, dtype=np.uint8).reshape(32, 32)])
for fmt, ext in (("png", "png"), ("tiff", "tiff"), ("webp", "webp")):
    kw = {"lossless": True, "exact": True} if fmt == "webp" else {}  # exact: keep RGB under alpha 0
    decode_case("%s_alpha_rgb" % ext, encode(alpha, fmt, "RGBA", **kw), "RGB", img)
decode_case("png_gray_alpha_grayscale",
            encode(np.dstack([gray, gray[::-1]]), "png", "LA"), "Grayscale", gray[:, :, None])
decode_case("bmp_alpha_grayscale", encode(alpha, "bmp", "RGBA"), "Grayscale",
            layout(img, "Grayscale"))

# 16-bit PNG: the high byte of each sample (Pillow reads 16-bit RGB so; its
# 16-bit gray is mode I, clipped by convert(), so numpy's answer is used).
wide = (np.arange(32 * 32 * 3, dtype=np.uint32).reshape(32, 32, 3) * 64 % 65536).astype(np.uint16)


def png16(a):
    """A 16-bit PNG (Pillow writes 16-bit gray but not 16-bit RGB): built by hand."""
    import struct
    import zlib
    h, w = a.shape[:2]
    color = 2 if a.ndim == 3 else 0
    raw = b"".join(b"\0" + a[y].astype(">u2").tobytes() for y in range(h))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, color, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


rgb16 = png16(wide)
assert (pillow(rgb16, "RGB") == (wide >> 8)).all()  # Pillow agrees for RGB
decode_case("png_16bit_rgb", rgb16, "RGB", wide >> 8)
decode_case("png_16bit_gray_grayscale", png16(wide[:, :, 0]), "Grayscale", (wide[:, :, :1] >> 8))
# Interlaced PNG (Adam7), built the same way is more work than it is worth:
# Pillow does not write it either.

# Netpbm: plain (ASCII) P1-P3 with comments, maxval below 255 and 16-bit, PAM.
def scale(v, maxval):
    return ((v.astype(np.int64) * 255 + maxval // 2) // maxval).astype(np.uint8)


small = tiles(4, 5, 2, seed=3)
lo = small // 32  # maxval 7
txt = "P3\n# a comment\n5 4\n7\n" + " ".join(str(v) for v in lo.ravel()) + "\n"
decode_case("ppm_plain_maxval7_rgb", txt.encode(), "RGB", scale(lo, 7))
txt = "P1\n5 4\n" + "".join("1" if v else "0" for v in (small[..., 0] > 128).ravel())
decode_case("pbm_plain_rgb", txt.encode(), "RGB", layout((small[..., 0] <= 128).astype(np.uint8) * 255, "RGB"))
txt = "P2 5 4 255 " + " ".join(str(v) for v in small[..., 1].ravel())
decode_case("pgm_plain_grayscale", txt.encode(), "Grayscale", small[..., 1:2])
deep = (wide[:4, :5] | 3).astype(np.uint16) % 1000
raw = b"P6\n5 4\n999\n" + deep.astype(">u2").tobytes()
decode_case("ppm_16bit_bgr", raw, "BGR", layout(scale(deep, 999), "BGR"))
pam = b"P7\nWIDTH 5\nHEIGHT 4\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n" + \
    np.dstack([small, small[..., :1]]).tobytes()
decode_case("pam_rgb_alpha_rgb", pam, "RGB", small)

# Streams that cannot be decoded: the spec's empty image.
png = encode(img, "png")
jpg = encode(img, "jpeg")
empty3, empty1 = np.zeros((0, 0, 3), np.uint8), np.zeros((0, 0, 1), np.uint8)
decode_case("invalid_stream_rgb", b"this is not an image at all", "RGB", empty3)
decode_case("truncated_png_rgb", png[:len(png) // 2], "RGB", empty3)
decode_case("truncated_jpeg_grayscale", jpg[:len(jpg) // 2], "Grayscale", empty1)
decode_case("truncated_bmp_bgr", encode(img, "bmp")[:1000], "BGR", empty3)
decode_case("truncated_ppm_rgb", encode(img, "ppm")[:100], "RGB", empty3)
decode_case("corrupt_png_crc_rgb", png[:40] + bytes([png[40] ^ 0xff]) + png[41:], "RGB", empty3)

# CMYK JPEG (Pillow writes Adobe's inverted values): to RGB as Pillow converts it.
cmyk = encode(np.array(Image.fromarray(img).convert("CMYK")), "jpeg", "CMYK", quality=95)
decode_case("jpeg_cmyk_rgb", cmyk, "RGB")


# 16-bit BMP (Pillow reads but does not write it): 5-5-5 and, with bit fields, 5-6-5.
def bmp16(px, masks=None):
    import struct
    h, w = px.shape
    stride = (w * 2 + 3) // 4 * 4
    rows = b"".join(px[y].astype("<u2").tobytes().ljust(stride, b"\0") for y in range(h - 1, -1, -1))
    extra = struct.pack("<III", *masks) if masks else b""
    off = 14 + 40 + len(extra)
    return (struct.pack("<2sIHHI", b"BM", off + len(rows), 0, 0, off) +
            struct.pack("<IiiHHIIiiII", 40, w, h, 1, 16, 3 if masks else 0, len(rows), 0, 0, 0, 0) +
            extra + rows)


px16 = (np.arange(5 * 7, dtype=np.uint32).reshape(5, 7) * 1871 % 65536).astype(np.uint16)
decode_case("bmp_16bit_555_rgb", bmp16(px16), "RGB")
decode_case("bmp_16bit_565_bgr", bmp16(px16, (0xf800, 0x07e0, 0x001f)), "BGR")


# RLE8 and RLE4 BMP (Pillow writes neither), built by hand.
def bmp_rle(w, h, bpp, data, pal):
    import struct
    ptab = b"".join(bytes([b, g, r, 0]) for r, g, b in pal)
    off = 14 + 40 + len(ptab)
    return (struct.pack("<2sIHHI", b"BM", off + len(data), 0, 0, off) +
            struct.pack("<IiiHHIIiiII", 40, w, h, 1, bpp, 1 if bpp == 8 else 2, len(data), 0, 0,
                        len(pal), 0) + ptab + data)


rle_pal = np.array([(10 * i, 255 - 10 * i, (37 * i) % 256) for i in range(16)], np.uint8)
# Every pixel written by runs and literals, row by row: Pillow's answer.
full = bytes([2, 1, 2, 2, 0, 0,  0, 3, 5, 6, 7, 0, 1, 8, 0, 0,  0, 1])
decode_case("bmp_rle8_rgb", bmp_rle(4, 2, 8, full, rle_pal), "RGB")
# Two ends of line, a jump (right 2, up 1), pixels never written (entry 0), a
# literal running past the width (dropped): Pillow 9.4 gets jumps and RLE4
# wrong (or refuses them), so the indexes are written out here.
jumps = bytes([3, 5, 0, 3, 5, 6, 7, 0, 0, 0, 0, 0, 0, 2, 2, 1, 2, 9, 0, 1])
idx = np.array([[0, 0, 9, 9, 0, 0, 0, 0], [0] * 8, [0] * 8, [5, 5, 5, 5, 6, 7, 0, 0]])
decode_case("bmp_rle8_jumps_rgb", bmp_rle(8, 4, 8, jumps, rle_pal), "RGB", rle_pal[idx])
nibbles = bytes([5, 0x3a, 0, 3, 0x12, 0x30, 0, 0, 4, 0x77, 0, 1])
idx = np.array([[0] * 7, [7, 7, 7, 7, 0, 0, 0], [3, 10, 3, 10, 3, 1, 2]])
decode_case("bmp_rle4_bgr", bmp_rle(7, 3, 4, nibbles, rle_pal), "BGR", rle_pal[idx][:, :, ::-1])
decode_case("bmp_rle8_no_end_rgb", bmp_rle(4, 2, 8, full[:-2], rle_pal), "RGB", empty3)
