/**
 * Responses compressed for the clients that accept it (`Accept-Encoding: gzip`, or deflate), as
 * Zulip's nginx does for its JSON, HTML, JavaScript and CSS: a register of a 10,000-person
 * organization is megabytes of JSON that compresses about tenfold, which matters to a phone or a
 * far-away browser more than the milliseconds it costs here. Only compressible types (JSON, text,
 * scripts; not images, already compressed) of at least 1 kB: a short answer gains
 * nothing but a header.
 *
 * zlib's level 1: at level 6 (the default) compressing a multi-megabyte register took several
 * times as long for a few percent smaller output, on the event loop every request shares.
 */
import compression from "compression";
import { constants } from "node:zlib";

export const compressResponses = () =>
  compression({
    level: constants.Z_BEST_SPEED,
    threshold: 1024,
    // A range of a file is a range of its bytes as stored: compressing it would answer other bytes.
    filter: (req, res) => !req.headers.range && compression.filter(req, res),
  });
