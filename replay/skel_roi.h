/* skel_roi.h — regions of interest marked in a program's source, for
 * `skel replay|run|trace --roi-markers`: the accesses made between the
 * return of skel_roi_begin and the call of skel_roi_end are kept (nested
 * pairs count once).  skel report names the region by the string literal
 * passed (skel gen reads it from the binary; nothing is recorded); a name
 * made at run time leaves the region unnamed, "markers".
 *
 * `make install` puts this header in PREFIX/include.  The definitions
 * are weak and do nothing: the program runs the same without skel.  skel recognises the calls from the routines' names, so
 * the binary must keep its symbol table (not stripped). */
#ifndef SKEL_ROI_H
#define SKEL_ROI_H

__attribute__((weak, noinline, noclone, used)) void skel_roi_begin(const char *name)
{
	__asm__ volatile("" : : "r"(name) : "memory");
}

__attribute__((weak, noinline, noclone, used)) void skel_roi_end(void)
{
	__asm__ volatile("" : : : "memory");
}

#endif
