/*
 * A fake NVML (libnvidia-ml.so.1) for tests: the real pynvml binding loads it through
 * LD_LIBRARY_PATH and gets canned readings.
 *
 * Readings come from the file named by FAKE_NVML_CONFIG (re-read when its mtime, to the
 * nanosecond, or its size changes, so a test can change them while a process runs). One `key=value` a line; `#` starts
 * a comment. A per-GPU key `gpu<N>.<key>` overrides the global `<key>` for GPU N.
 *
 *   init_error=9              nvmlInitWithFlags returns this NVML error code (0: success)
 *   driver_version=550.54.14
 *   count=2                   number of GPUs
 *   name=Fake GPU             gpu1.name=Other GPU
 *   memory_total=8589934592   memory_used=1073741824          (bytes)
 *   temperature=61            (C)
 *   temperature_slowdown=93   (C) NVML's slowdown threshold (nvmlDeviceGetTemperatureThreshold, SLOWDOWN);
 *                             temperature_shutdown=100 likewise; other thresholds are not supported
 *   util_gpu=87  util_memory=40                               (%)
 *   power_mw=85000  power_limit_mw=115000                     (milliwatts, as NVML reports)
 *   sm_clock=1800             (MHz)
 *   fan=45                    (%)
 *   cc_major=8 cc_minor=6     compute capability
 *   procs=1234:1000000,5678:na   compute processes pid:usedGpuMemory ("na" = not available, WDDM)
 *   throttle_reasons=68       clock event (throttle) reasons bit mask, decimal or 0x.. (0x44: thermal + power cap)
 *   energy_mj=5000000         total energy counter at the first read (mJ); it then grows by power_mw times the
 *                             seconds between reads, as a real counter does (nvmlDeviceGetTotalEnergyConsumption)
 *   not_supported=temperature,fan   these metrics return NVML_ERROR_NOT_SUPPORTED
 *   fail.power=15             this metric returns the given error code
 *   uuid=GPU-...              the GPU's UUID (nvmlDeviceGetUUID; nvmlDeviceGetHandleByUUID finds it); by default
 *                             GPU-fa4e0000-0000-4000-8000-00000000000N for GPU N
 *
 * Metric names for not_supported / fail.*: name memory temperature temperature_threshold utilization
 * power power_limit clock fan compute_capability processes throttle_reasons energy uuid.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

typedef int nvmlReturn_t;
typedef void *nvmlDevice_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_UNKNOWN 999

typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;

typedef struct {
    unsigned int gpu, memory;
} nvmlUtilization_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;

#define MAX_KEYS 256
#define KEY_LEN 64
#define VAL_LEN 256

static char keys[MAX_KEYS][KEY_LEN];
static char vals[MAX_KEYS][VAL_LEN];
static int nkeys = 0;
static time_t loaded_mtime = 0;
static long loaded_mtime_ns = -1;
static off_t loaded_size = -1;
static int initialized = 0;

static void load_config(void) {
    const char *path = getenv("FAKE_NVML_CONFIG");
    struct stat st;
    if (!path || stat(path, &st) != 0) {
        nkeys = 0;
        return;
    }
    /* same second and same size is not the same file: a test rewrites 'temperature=50' as '=83' */
    if (st.st_mtime == loaded_mtime && st.st_mtim.tv_nsec == loaded_mtime_ns && st.st_size == loaded_size) return;
    FILE *fh = fopen(path, "r");
    if (!fh) return;
    nkeys = 0;
    char line[KEY_LEN + VAL_LEN + 4];
    while (nkeys < MAX_KEYS && fgets(line, sizeof line, fh)) {
        line[strcspn(line, "\r\n")] = 0;
        if (line[0] == '#' || line[0] == 0) continue;
        char *eq = strchr(line, '=');
        if (!eq) continue;
        *eq = 0;
        snprintf(keys[nkeys], KEY_LEN, "%.63s", line);
        snprintf(vals[nkeys], VAL_LEN, "%.255s", eq + 1);
        nkeys++;
    }
    fclose(fh);
    loaded_mtime = st.st_mtime;
    loaded_mtime_ns = st.st_mtim.tv_nsec;
    loaded_size = st.st_size;
}

static const char *lookup(const char *key) {
    for (int i = 0; i < nkeys; i++)
        if (strcmp(keys[i], key) == 0) return vals[i];
    return NULL;
}

/* gpu<N>.<key>, then <key>, then the default. */
static const char *get(int dev, const char *key, const char *dflt) {
    char full[KEY_LEN + 16];
    snprintf(full, sizeof full, "gpu%d.%s", dev, key);
    const char *v = lookup(full);
    if (!v) v = lookup(key);
    return v ? v : dflt;
}

static unsigned long long get_ull(int dev, const char *key, unsigned long long dflt) {
    const char *v = get(dev, key, NULL);
    return v ? strtoull(v, NULL, 0) : dflt; /* base 0: decimal, or 0x.. for a bit mask */
}

static int device_count(void) { return (int)get_ull(-1, "count", 1); }

static int in_list(const char *list, const char *name) {
    if (!list) return 0;
    size_t n = strlen(name);
    const char *p = list;
    while (*p) {
        while (*p == ',' || *p == ' ') p++;
        if (strncmp(p, name, n) == 0 && (p[n] == 0 || p[n] == ',' || p[n] == ' ')) return 1;
        while (*p && *p != ',') p++;
    }
    return 0;
}

/* The error a metric must return for this device (0: read it). */
static nvmlReturn_t metric_error(int dev, const char *metric) {
    char key[KEY_LEN];
    snprintf(key, sizeof key, "fail.%s", metric);
    const char *code = get(dev, key, NULL);
    if (code) return atoi(code);
    if (in_list(get(dev, "not_supported", NULL), metric)) return NVML_ERROR_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

/* Common checks: initialized, valid handle; loads the config and gives the device index. */
static nvmlReturn_t begin(nvmlDevice_t device, const char *metric, int *dev) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    load_config();
    intptr_t idx = (intptr_t)device - 1;
    if (idx < 0 || idx >= device_count()) return NVML_ERROR_INVALID_ARGUMENT;
    *dev = (int)idx;
    return metric ? metric_error(*dev, metric) : NVML_SUCCESS;
}

#define BEGIN(device, metric)                       \
    int dev;                                        \
    nvmlReturn_t rc_ = begin(device, metric, &dev); \
    if (rc_ != NVML_SUCCESS) return rc_;

nvmlReturn_t nvmlInitWithFlags(unsigned int flags) {
    (void)flags;
    load_config();
    nvmlReturn_t err = (nvmlReturn_t)get_ull(-1, "init_error", 0);
    if (err != NVML_SUCCESS) return err;
    initialized = 1;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void) { return nvmlInitWithFlags(0); }
nvmlReturn_t nvmlInit(void) { return nvmlInitWithFlags(0); }

nvmlReturn_t nvmlShutdown(void) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    initialized = 0;
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result) {
    switch (result) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 9: return "Driver Not Loaded";
    case 18: return "RM has detected an NVML/RM version mismatch.";
    default: return "Fake NVML error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    load_config();
    snprintf(version, length, "%s", get(-1, "driver_version", "550.54.14"));
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    load_config();
    *count = (unsigned int)device_count();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    load_config();
    if ((int)index >= device_count()) return NVML_ERROR_INVALID_ARGUMENT;
    *device = (nvmlDevice_t)(intptr_t)(index + 1);
    return NVML_SUCCESS;
}

static void device_uuid(int dev, char *out, size_t length) {
    const char *v = get(dev, "uuid", NULL);
    if (v) snprintf(out, length, "%s", v);
    else snprintf(out, length, "GPU-fa4e0000-0000-4000-8000-%012d", dev);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length) {
    BEGIN(device, "uuid");
    char value[VAL_LEN];
    device_uuid(dev, value, sizeof value);
    if (strlen(value) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    snprintf(uuid, length, "%s", value);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    load_config();
    char value[VAL_LEN];
    for (int dev = 0; dev < device_count(); dev++) {
        device_uuid(dev, value, sizeof value);
        if (strcmp(value, uuid) == 0) {
            *device = (nvmlDevice_t)(intptr_t)(dev + 1);
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length) {
    BEGIN(device, "name");
    snprintf(name, length, "%s", get(dev, "name", "Fake GPU"));
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory) {
    BEGIN(device, "memory");
    memory->total = get_ull(dev, "memory_total", 8ULL << 30);
    memory->used = get_ull(dev, "memory_used", 1ULL << 30);
    memory->free = memory->total - memory->used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory) {
    BEGIN(device, "memory");
    memory->total = get_ull(dev, "memory_total", 8ULL << 30);
    memory->used = get_ull(dev, "memory_used", 1ULL << 30);
    memory->reserved = 0;
    memory->free = memory->total - memory->used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned int *temp) {
    BEGIN(device, "temperature");
    if (sensor != 0) return NVML_ERROR_INVALID_ARGUMENT;
    *temp = (unsigned int)get_ull(dev, "temperature", 50);
    return NVML_SUCCESS;
}

/* thresholdType: 0 shutdown, 1 slowdown (NVML_TEMPERATURE_THRESHOLD_*); the others are not supported here. */
nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device, int thresholdType, unsigned int *temp) {
    BEGIN(device, "temperature_threshold");
    if (thresholdType == 0) *temp = (unsigned int)get_ull(dev, "temperature_shutdown", 100);
    else if (thresholdType == 1) *temp = (unsigned int)get_ull(dev, "temperature_slowdown", 93);
    else return NVML_ERROR_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *util) {
    BEGIN(device, "utilization");
    util->gpu = (unsigned int)get_ull(dev, "util_gpu", 0);
    util->memory = (unsigned int)get_ull(dev, "util_memory", 0);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power) {
    BEGIN(device, "power");
    *power = (unsigned int)get_ull(dev, "power_mw", 30000);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit) {
    BEGIN(device, "power_limit");
    *limit = (unsigned int)get_ull(dev, "power_limit_mw", 115000);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int *limit) {
    return nvmlDeviceGetEnforcedPowerLimit(device, limit);
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int *clock) {
    BEGIN(device, "clock");
    *clock = (unsigned int)(type == 1 ? get_ull(dev, "sm_clock", 1500) : get_ull(dev, "other_clock", 5000));
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int *speed) {
    BEGIN(device, "fan");
    *speed = (unsigned int)get_ull(dev, "fan", 30);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor) {
    BEGIN(device, "compute_capability");
    *major = (int)get_ull(dev, "cc_major", 8);
    *minor = (int)get_ull(dev, "cc_minor", 6);
    return NVML_SUCCESS;
}

/* Parses "pid:bytes,pid:na" into infos (up to max); returns how many entries the list has. */
static unsigned int parse_procs(int dev, nvmlProcessInfo_v2_t *infos, unsigned int max) {
    const char *p = get(dev, "procs", "");
    unsigned int n = 0;
    while (*p) {
        while (*p == ',' || *p == ' ') p++;
        if (!*p) break;
        char *end;
        unsigned long pid = strtoul(p, &end, 10);
        unsigned long long mem = ~0ULL; /* NVML_VALUE_NOT_AVAILABLE */
        if (*end == ':') {
            end++;
            if (strncmp(end, "na", 2) == 0) end += 2;
            else mem = strtoull(end, &end, 10);
        }
        if (infos && n < max) {
            infos[n].pid = (unsigned int)pid;
            infos[n].usedGpuMemory = mem;
            infos[n].gpuInstanceId = 0xFFFFFFFFu;
            infos[n].computeInstanceId = 0xFFFFFFFFu;
        }
        n++;
        p = end;
        while (*p && *p != ',') p++;
    }
    return n;
}

static nvmlReturn_t running_processes(nvmlDevice_t device, unsigned int *count, nvmlProcessInfo_v2_t *infos) {
    BEGIN(device, "processes");
    unsigned int n = parse_procs(dev, NULL, 0);
    if (n == 0) {
        *count = 0;
        return NVML_SUCCESS;
    }
    if (*count < n || infos == NULL) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    parse_procs(dev, infos, *count);
    *count = n;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_v2_t *i) {
    return running_processes(d, c, i);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_v2_t *i) {
    return running_processes(d, c, i);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *reasons) {
    BEGIN(device, "throttle_reasons");
    *reasons = get_ull(dev, "throttle_reasons", 0);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long *reasons) {
    return nvmlDeviceGetCurrentClocksEventReasons(device, reasons);
}

#define MAX_DEVS 16
static double energy_mj[MAX_DEVS];
static double energy_last_s[MAX_DEVS];
static int energy_started[MAX_DEVS];

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A counter in millijoules that grows by the power reading (mW) times the seconds since the last read. */
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy) {
    BEGIN(device, "energy");
    if (dev >= MAX_DEVS) return NVML_ERROR_NOT_SUPPORTED;
    double now = now_s();
    if (!energy_started[dev]) {
        energy_started[dev] = 1;
        energy_mj[dev] = (double)get_ull(dev, "energy_mj", 5000000ULL);
    } else {
        energy_mj[dev] += (double)get_ull(dev, "power_mw", 30000) * (now - energy_last_s[dev]);
    }
    energy_last_s[dev] = now;
    *energy = (unsigned long long)energy_mj[dev];
    return NVML_SUCCESS;
}
