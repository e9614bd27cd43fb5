/* Data objects libcudnn_graph.so.9 exports (the sub-libraries of the real
 * cuDNN read them): defined as data of the real sizes, so that a program
 * that links them gets data, not a function. Values as the real library's
 * at start-up. */
#include <stdint.h>

int cudnn_graph_version = 594688;
void *userData;
void *CallbackFun;
/* logging state: a start time and four level switches (16 bytes each in
 * the real library) */
uint64_t startingTime[2];
uint64_t loglevel_dbg[2];
uint64_t logwarn_dbg[2];
uint64_t loginfo_dbg[2];
uint64_t logerr_dbg[2];
