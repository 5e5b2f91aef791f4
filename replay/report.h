/* report.h — skel report (--report): per region of interest and per
 * object, accesses, bytes, distinct cache lines and pages, first and last
 * access time; per region its wall time and bandwidth; a time series of
 * bytes per object (--csv DIR) and the data of an address-time heat map
 * (--plot, drawn by the driver).  Part of the replayer's runtime.
 *
 * Objects are groups of what symbolize.h names: heap blocks by their
 * allocation site (heap@SITE), static data by symbol, a thread's stack or
 * TLS block, ? for the rest.
 *
 * Time: each thread has a clock, its accesses so far (those outside the
 * regions included); the recorder's TIME stamps are placed on it as the
 * replay reaches their words (report_stamp), and an access's time is
 * interpolated linearly by clock between the stamps around it.
 *
 * Threads: one rep_thread per replayed stream, used by its replay thread
 * only; report_write, after every replay ended, merges them. */
#ifndef SKEL_REPLAY_REPORT_H
#define SKEL_REPLAY_REPORT_H

#include "replay/format.h"
#include "replay/skel_rt.h"
#include "replay/symbolize.h"

/* Region numbers: 0..nroi-1 the --roi routines in the order given, nroi
 * the markers' region; without regions, 0 is the whole run. */
typedef struct rep_config {
	const char *const *roi;	/* names, NULL without --roi */
	int nroi;
	bool markers;
	const char *csv_dir;	/* --csv DIR, or NULL */
	const char *heat_out;	/* the heat map's data for the driver, or NULL */
} rep_config;

typedef struct rep_thread rep_thread;

void report_setup(const rep_config *c);
rep_thread *report_thread_new(uint32_t thread);
/* The thread had written `word` words at `ns`: here, at clock. */
void report_stamp(rep_thread *r, uint64_t clock, uint64_t ns);
/* At clock the thread enters region `roi` (its accesses count there),
 * or leaves every region (roi < 0). */
void report_region(rep_thread *r, uint64_t clock, int roi);
/* --roi-markers: the region of the markers that pass `name` (NULL: not
 * known), made at its first. */
int report_marker(const char *name);
/* Accesses come in batches (the skeleton stores them, sk_batch_add, and
 * the loop over a batch runs at memory speed; a call per access would
 * not): n accesses, the first at `clock`, the others right after it.
 * The caller hands its batch over before it calls anything else here
 * and before its view passes heap events. */
void report_batch(rep_thread *r, sym_view *v, uint64_t clock, const sk_rec *a, size_t n);
/* The thread's replay ended at clock. */
void report_thread_end(rep_thread *r, uint64_t clock);
/* The tables to out, the CSV files and the heat map data; frees it all.
 * 0, or -1 after saying why (a file that cannot be written). */
int report_write(FILE *out);

#endif
