/* The collection thread (grtrace-probes): reads back what instrumented launches left on the device. */
#ifndef GRT_INJECT_COLLECTOR_H
#define GRT_INJECT_COLLECTOR_H

struct instr_state;

/* Starts the thread once; under the lock. 0 or -EAGAIN. */
int collector_start(struct instr_state *is);
/* Stops and joins it (the final collection is the caller's). */
void collector_stop(struct instr_state *is);

#endif
