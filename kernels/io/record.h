/* io/record.h — TFRecord framing for the engine's own users (event files,
 * the data pipeline): the public API of tide/records.h plus its constants. */
#ifndef TIDE_IO_RECORD_H
#define TIDE_IO_RECORD_H

#include "tide/records.h"
#include "crc32c.h"

/* Bytes of framing around each record: 12 before (length, its CRC), 4 after. */
enum { TIDE_RECORD_HEADER_BYTES = 12, TIDE_RECORD_FOOTER_BYTES = 4 };

#endif
