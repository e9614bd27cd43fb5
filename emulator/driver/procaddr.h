/* The cuGetProcAddress table, generated from driver.symbols by
 * gen_procaddr.sh (the generated file declares every exported symbol, so it
 * cannot include cuda.h, which #defines many of them to newer names). */
#ifndef MAYA_DRV_PROCADDR_H
#define MAYA_DRV_PROCADDR_H

struct proc_version {
    int version;                 /* CUDA version that introduced this ABI */
    void *fn;
    void *fn_per_thread;         /* _ptds / _ptsz variant, or NULL */
};

struct proc_entry {
    const char *name;            /* API name, as cuGetProcAddress is asked */
    int first, count;            /* its versions in proc_versions, ascending */
};

/* Sorted by name (strcmp order). */
extern const struct proc_entry proc_entries[];
extern const int proc_nentries;
extern const struct proc_version proc_versions[];

#endif
