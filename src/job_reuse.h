/* Reusing DIR/job.mtrace when the traces it was collated from have not
 * changed (src/job_reuse.c). */
#ifndef MAYA_CLI_JOB_REUSE_H
#define MAYA_CLI_JOB_REUSE_H

#define JOB_INPUTS_FILE "job.mtrace.inputs"

/* 1 when DIR/job.mtrace was collated, in this mode (allow_incomplete), by
 * this maya binary, from the files DIR/traces holds now; 0 otherwise. */
int job_trace_reusable(const char *dir, int allow_incomplete);
/* After a collation succeeded: record what DIR/job.mtrace was made from.
 * 0, or -1 with a message (the job trace is good; the next report
 * collates again). */
int job_trace_stamp(const char *dir, int allow_incomplete);

#endif
