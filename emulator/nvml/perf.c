/* Clocks, power, temperature and utilisation. Nothing runs on an emulated
 * GPU, so what varies on a real one is fixed here:
 *   clocks       current = application: the hwspec's boost SM clock (graphics
 *                and SM), or the SM clock limit it states (a locked clock,
 *                nvidia-smi -lgc), and memory clock; maximum: the boost
 *                clock; no video clock is known
 *   power        default limit = the hwspec's TDP; limit = enforced = its
 *                power limit when it states one, else the TDP; the draw is
 *                an idle one, a tenth of the TDP (70 W on an H100 SXM)
 *   temperature  an idle 30 C
 *   utilisation  0 % (no kernel has run on the GPU)
 * Power is in milliwatts, clocks in MHz, as NVML reports them. */
#include "nvml_impl.h"

#define IDLE_TEMPERATURE_C 30

/* max: the boost clock, else the clock the GPU runs at (its SM clock limit) */
static nvmlReturn_t clock_mhz(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock, int max)
{
    const struct nvml_gpu *g = nvml_gpu(device);
    if (!g || !clock || (unsigned)type >= NVML_CLOCK_COUNT)
        return NVML_ERROR_INVALID_ARGUMENT;
    const struct maya_gpu_perf *p = &g->spec->perf;
    switch (type) {
    case NVML_CLOCK_GRAPHICS:
    case NVML_CLOCK_SM:
        *clock = (unsigned)(!max && p->sm_clock_limit_mhz > 0 && p->sm_clock_limit_mhz < p->sm_clock_mhz
                                ? p->sm_clock_limit_mhz : p->sm_clock_mhz);
        break;
    case NVML_CLOCK_MEM: *clock = (unsigned)g->spec->perf.mem_clock_mhz; break;
    default: return NVML_ERROR_NOT_SUPPORTED;
    }
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
    NVML_CALL(clock_mhz(device, type, clock, 0));
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
    NVML_CALL(clock_mhz(device, type, clock, 1));
}

nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t device, nvmlClockType_t clockType, unsigned int *clockMHz)
{
    NVML_CALL(clock_mhz(device, clockType, clockMHz, 0));
}

nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t device, nvmlClockType_t clockType,
                                                   unsigned int *clockMHz)
{
    NVML_CALL(clock_mhz(device, clockType, clockMHz, 0));
}

/* The TDP (or, capped: the power limit the hwspec states) in milliwatts,
 * divided by div. */
static nvmlReturn_t power_mw(nvmlDevice_t device, unsigned int *out, unsigned div, int capped)
{
    const struct nvml_gpu *g = nvml_gpu(device);
    if (!g || !out)
        return NVML_ERROR_INVALID_ARGUMENT;
    const struct maya_gpu_perf *p = &g->spec->perf;
    double w = capped && p->power_limit_watts > 0 && p->power_limit_watts < p->tdp_watts ? p->power_limit_watts
                                                                                          : p->tdp_watts;
    *out = (unsigned)(w * 1000.0) / div;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int *limit)
{
    NVML_CALL(power_mw(device, limit, 1, 1));
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned int *defaultLimit)
{
    NVML_CALL(power_mw(device, defaultLimit, 1, 0));
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit)
{
    NVML_CALL(power_mw(device, limit, 1, 1));
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
    NVML_CALL(power_mw(device, power, 10, 0));
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType, unsigned int *temp)
{
    NVML_ENTER_GPU(device);
    if (!temp || sensorType != NVML_TEMPERATURE_GPU)
        NVML_RETURN(NVML_ERROR_INVALID_ARGUMENT);
    *temp = IDLE_TEMPERATURE_C;
    NVML_RETURN(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_v1_t *temperature)
{
    NVML_ENTER_GPU(device);
    if (!temperature)
        NVML_RETURN(NVML_ERROR_INVALID_ARGUMENT);
    if (temperature->version != nvmlTemperature_v1)
        NVML_RETURN(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    if (temperature->sensorType != NVML_TEMPERATURE_GPU)
        NVML_RETURN(NVML_ERROR_INVALID_ARGUMENT);
    temperature->temperature = IDLE_TEMPERATURE_C;
    NVML_RETURN(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
    NVML_ENTER_GPU(device);
    if (!utilization)
        NVML_RETURN(NVML_ERROR_INVALID_ARGUMENT);
    utilization->gpu = 0;
    utilization->memory = 0;
    NVML_RETURN(NVML_SUCCESS);
}
