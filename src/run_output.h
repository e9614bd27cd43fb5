/* maya run --tee: the ranks' output on the terminal, line by line with a
 * [rank N] prefix, while DIR/logs keeps all of it (src/run_output.c). */
#ifndef MAYA_CLI_RUN_OUTPUT_H
#define MAYA_CLI_RUN_OUTPUT_H

#define RUN_OUTPUT_LINE 4096
#define RUN_OUTPUT_MAX_LIST 64

struct run_stream;

struct run_output {
    int all, none, given;         /* given: --tee was on the command line */
    int list[RUN_OUTPUT_MAX_LIST];
    int nlist;
    int prefix;                   /* several processes: lines carry [rank N] */
    struct run_stream *streams;
    int nstreams;
    int noted;                    /* the note on values printed (once) */
};

/* --tee SPEC: all, none, or N[,N...]. 0 or -1 with a message. */
int run_output_parse(struct run_output *o, const char *spec);
/* Before the ranks start: create the shown ranks' logs and follow them.
 * 0 or -1 with a message. */
int run_output_start(struct run_output *o, const char *dir, int nprocs);
/* Print the complete lines written since the last call. */
void run_output_poll(struct run_output *o);
/* After the ranks ended: print what is left (a last line without its
 * newline too) and stop following. */
void run_output_finish(struct run_output *o);

#endif
