// Image checks without a decoder (reference §2.3: png, jpeg and gif only, ≤40 M pixels): the
// format's signature and the dimensions its header declares. The model receives the bytes, so a
// file that claims an image name but is not one of these formats never reaches it.
import { Limits } from '#contracts';

export const IMAGE_EXTENSIONS: ReadonlySet<string> = new Set(['.png', '.jpg', '.jpeg', '.gif']);

export type ImageFormat = 'png' | 'jpeg' | 'gif';

/** Whether a file name is treated as an image (and so bounded by IMAGE_MAX_BYTES). */
export function isImageName(name: string): boolean {
  const dot = name.lastIndexOf('.');
  return dot >= 0 && IMAGE_EXTENSIONS.has(name.slice(dot).toLowerCase());
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** JPEG start-of-frame markers that carry the frame size (all SOFn but DHT, JPG and DAC). */
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

function jpegSize(data: Buffer): { width: number; height: number } | undefined {
  let at = 2;
  while (at + 4 <= data.length) {
    if (data[at] !== 0xff) return undefined;
    const marker = data[at + 1] as number;
    // Fill bytes and markers without a length.
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      at += 2;
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return undefined;
    const length = data.readUInt16BE(at + 2);
    if (length < 2) return undefined;
    if (isStartOfFrame(marker)) {
      if (at + 9 > data.length || length < 7) return undefined;
      return { height: data.readUInt16BE(at + 5), width: data.readUInt16BE(at + 7) };
    }
    at += 2 + length;
  }
  return undefined;
}

/** The image's format when `data` is a png, jpeg or gif within the pixel bound; else undefined. */
export function imageFormat(data: Buffer): ImageFormat | undefined {
  let format: ImageFormat;
  let size: { width: number; height: number } | undefined;
  if (data.length >= 24 && data.subarray(0, 8).equals(PNG_SIGNATURE)) {
    if (data.toString('latin1', 12, 16) !== 'IHDR') return undefined;
    format = 'png';
    size = { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
  } else if (data.length >= 10 && /^GIF8[79]a$/.test(data.toString('latin1', 0, 6))) {
    format = 'gif';
    size = { width: data.readUInt16LE(6), height: data.readUInt16LE(8) };
  } else if (data.length >= 4 && data[0] === 0xff && data[1] === 0xd8) {
    format = 'jpeg';
    size = jpegSize(data);
  } else {
    return undefined;
  }
  if (!size || size.width < 1 || size.height < 1) return undefined;
  if (size.width * size.height > Limits.IMAGE_MAX_PIXELS) return undefined;
  return format;
}
