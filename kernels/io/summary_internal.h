/* io/summary_internal.h — the seam between the event-file writer (queue,
 * thread, file) and the summary encoders (Summary.Value of each plugin). */
#ifndef TIDE_IO_SUMMARY_INTERNAL_H
#define TIDE_IO_SUMMARY_INTERNAL_H

#include "tide/summary.h"
#include "tide_proto/event.pb-c.h"

/* Queue one Event (wall time now, `step`, a Summary of the one `value`) on
 * the writer: encoded and framed now, written by the flusher later. */
tide_status tide_summary_queue_value(tide_summary_writer *w, int64_t step, const Tensorflow__Summary__Value *value);

/* Take another reference: the writer lives until tide_summary_writer_free
 * has been called once more than this (a traced graph's summary nodes hold one). */
void tide_summary_writer_retain(tide_summary_writer *w);

/* Queue `ev` (its wall time set to now) on the writer; `what` names it in errors. */
tide_status tide_summary_queue_event(tide_summary_writer *w, Tensorflow__Event *ev, const char *what);

#endif
