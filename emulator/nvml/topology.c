/* How the node's GPUs are linked: NVLinks, peer-to-peer, PCIe, the NVLink
 * fabric, CPU and memory affinity. From the GPU's hwspec (nvlink_links,
 * pcie_gbps) and the node's intra-node kind (MAYA_INTRA_NODE, the cluster
 * file's intra_node):
 *   nvswitch  every NVLink of every GPU reaches the node's NVSwitch fabric
 *             (the remote end is a switch), so every pair talks over NVLink
 *   pairwise  GPUs 2k and 2k+1 are bridged: every link reaches the partner
 *   pcie      the GPUs' NVLinks (if they have any) are not connected
 * The PCIe tree is a two-socket server's: pairs of GPUs share a PCIe switch,
 * the first half of the GPUs hang off one CPU socket, the rest off the
 * other. CPU and memory affinity are every CPU and NUMA node of the machine
 * the emulation runs on (its processes must not be pinned to a made-up
 * socket). */
#include "nvml_impl.h"

#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The NVSwitch fabric as one switch on the PCI bus (its identity is made up:
 * programs look at the type of a link's remote end, not at the switch). */
#define SWITCH_BUS 0xE0
#define PCI_VENDOR_NVIDIA 0x10de

enum link_end { LINK_DOWN, LINK_SWITCH, LINK_GPU };

/* What NVLink `link` of g reaches (and the peer GPU for LINK_GPU):
 * NOT_SUPPORTED for a GPU without NVLink, INVALID_ARGUMENT past its links. */
static nvmlReturn_t nvlink_end(const struct nvml_gpu *g, unsigned link, enum link_end *end,
                               const struct nvml_gpu **peer)
{
    unsigned nlinks = (unsigned)g->spec->perf.nvlink_links;
    if (!nlinks)
        return NVML_ERROR_NOT_SUPPORTED;
    if (link >= nlinks)
        return NVML_ERROR_INVALID_ARGUMENT;
    *end = LINK_DOWN;
    *peer = NULL;
    if (emu_config()->intra == MAYA_LINK_NVSWITCH) {
        *end = LINK_SWITCH;
    } else if (emu_config()->intra == MAYA_LINK_PAIRWISE) {
        *peer = nvml_gpu_at(g->index ^ 1);
        *end = *peer ? LINK_GPU : LINK_DOWN;
    }
    return NVML_SUCCESS;
}

/* NVLink state of a link: for a handle and a link, the end or an error. */
static nvmlReturn_t link_of(nvmlDevice_t device, unsigned link, enum link_end *end, const struct nvml_gpu **peer)
{
    const struct nvml_gpu *g = nvml_gpu(device);
    return g ? nvlink_end(g, link, end, peer) : NVML_ERROR_INVALID_ARGUMENT;
}

static nvmlReturn_t link_state(nvmlDevice_t device, unsigned int link, nvmlEnableState_t *isActive)
{
    enum link_end end;
    const struct nvml_gpu *peer;
    nvmlReturn_t r = isActive ? link_of(device, link, &end, &peer) : NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS)
        *isActive = end == LINK_DOWN ? NVML_FEATURE_DISABLED : NVML_FEATURE_ENABLED;
    return r;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, nvmlEnableState_t *isActive)
{
    NVML_CALL(link_state(device, link, isActive));
}

/* P2P over an active link, with atomics; no NVLink to the CPU (x86 hosts)
 * and no SLI. */
static nvmlReturn_t link_capability(nvmlDevice_t device, unsigned int link, nvmlNvLinkCapability_t capability,
                                    unsigned int *capResult)
{
    enum link_end end;
    const struct nvml_gpu *peer;
    if (!capResult || (unsigned)capability >= NVML_NVLINK_CAP_COUNT)
        return NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t r = link_of(device, link, &end, &peer);
    if (r != NVML_SUCCESS)
        return r;
    switch (capability) {
    case NVML_NVLINK_CAP_P2P_SUPPORTED:
    case NVML_NVLINK_CAP_P2P_ATOMICS: *capResult = end != LINK_DOWN; break;
    case NVML_NVLINK_CAP_VALID: *capResult = 1; break;
    default: *capResult = 0; break;
    }
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkCapability(nvmlDevice_t device, unsigned int link,
                                           nvmlNvLinkCapability_t capability, unsigned int *capResult)
{
    NVML_CALL(link_capability(device, link, capability, capResult));
}

/* An inactive link has no remote end: NOT_SUPPORTED. */
static nvmlReturn_t remote_pci(nvmlDevice_t device, unsigned int link, nvmlPciInfo_t *pci, int legacy)
{
    enum link_end end;
    const struct nvml_gpu *peer;
    nvmlReturn_t r = pci ? link_of(device, link, &end, &peer) : NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS)
        return r;
    if (end == LINK_DOWN)
        return NVML_ERROR_NOT_SUPPORTED;
    if (end == LINK_GPU) {
        nvml_gpu_pci(peer, pci, legacy);
        return NVML_SUCCESS;
    }
    nvmlPciInfo_t p;
    memset(&p, 0, sizeof p);
    p.bus = SWITCH_BUS;
    p.pciDeviceId = PCI_VENDOR_NVIDIA;
    nvml_pci_format(&p);
    memcpy(pci, &p, legacy ? offsetof(nvmlPciInfo_t, busId) : sizeof p);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link, nvmlPciInfo_t *pci)
{
    NVML_CALL(remote_pci(device, link, pci, 0));
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t device, unsigned int link, nvmlPciInfo_t *pci)
{
    NVML_CALL(remote_pci(device, link, pci, 1));
}

static nvmlReturn_t remote_type(nvmlDevice_t device, unsigned int link, nvmlIntNvLinkDeviceType_t *type)
{
    enum link_end end;
    const struct nvml_gpu *peer;
    nvmlReturn_t r = type ? link_of(device, link, &end, &peer) : NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS)
        return r;
    if (end == LINK_DOWN)
        return NVML_ERROR_NOT_SUPPORTED;
    *type = end == LINK_GPU ? NVML_NVLINK_DEVICE_TYPE_GPU : NVML_NVLINK_DEVICE_TYPE_SWITCH;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link,
                                                 nvmlIntNvLinkDeviceType_t *pNvLinkDeviceType)
{
    NVML_CALL(remote_type(device, link, pNvLinkDeviceType));
}

/* Whether two GPUs share an NVLink path (their link 0 tells: every link of
 * a GPU reaches the same place). */
static int nvlinked(const struct nvml_gpu *a, const struct nvml_gpu *b)
{
    enum link_end end_a, end_b;
    const struct nvml_gpu *peer_a, *peer_b;
    if (a == b || nvlink_end(a, 0, &end_a, &peer_a) != NVML_SUCCESS ||
        nvlink_end(b, 0, &end_b, &peer_b) != NVML_SUCCESS)
        return 0;
    return (end_a == LINK_SWITCH && end_b == LINK_SWITCH) || (end_a == LINK_GPU && peer_a == b);
}

/* Every pair of the node's GPUs can read, write and use atomics on each
 * other's memory (as cuDeviceCanAccessPeer says), over NVLink or PCIe. */
nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2, nvmlGpuP2PCapsIndex_t p2pIndex,
                                    nvmlGpuP2PStatus_t *p2pStatus)
{
    NVML_ENTER();
    const struct nvml_gpu *a = nvml_gpu(device1), *b = nvml_gpu(device2);
    if (!a || !b || !p2pStatus || (unsigned)p2pIndex >= NVML_P2P_CAPS_INDEX_UNKNOWN)
        NVML_RETURN(NVML_ERROR_INVALID_ARGUMENT);
    int ok = p2pIndex == NVML_P2P_CAPS_INDEX_NVLINK ? nvlinked(a, b) : 1;
    *p2pStatus = ok ? NVML_P2P_STATUS_OK : NVML_P2P_STATUS_NOT_SUPPORTED;
    NVML_RETURN(NVML_SUCCESS);
}

static int socket_of(const struct nvml_gpu *g)
{
    return g->index >= (nvml_gpu_count() + 1) / 2;
}

nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1, nvmlDevice_t device2,
                                                 nvmlGpuTopologyLevel_t *pathInfo)
{
    NVML_ENTER();
    const struct nvml_gpu *a = nvml_gpu(device1), *b = nvml_gpu(device2);
    if (!a || !b || !pathInfo)
        NVML_RETURN(NVML_ERROR_INVALID_ARGUMENT);
    if (a == b)
        *pathInfo = NVML_TOPOLOGY_INTERNAL;
    else if (a->index / 2 == b->index / 2)
        *pathInfo = NVML_TOPOLOGY_SINGLE;
    else
        *pathInfo = socket_of(a) == socket_of(b) ? NVML_TOPOLOGY_NODE : NVML_TOPOLOGY_SYSTEM;
    NVML_RETURN(NVML_SUCCESS);
}

/* ---- the NVLink fabric ----
 * Hopper and later GPUs on an NVSwitch node have registered with the
 * node's fabric manager (state completed, clique 0, an all-zero cluster
 * UUID: a single-node NVLink domain, as an HGX H100 reports); off an
 * NVSwitch they report that the fabric is not supported; older GPUs do not
 * have the query at all. */

static nvmlReturn_t fabric_state(const struct nvml_gpu *g, nvmlGpuFabricState_t *state)
{
    if (g->prop.major < 9)
        return NVML_ERROR_NOT_SUPPORTED;
    int on_switch = emu_config()->intra == MAYA_LINK_NVSWITCH && g->spec->perf.nvlink_links > 0;
    *state = on_switch ? NVML_GPU_FABRIC_STATE_COMPLETED : NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device, nvmlGpuFabricInfo_t *gpuFabricInfo)
{
    NVML_ENTER_GPU(device);
    nvmlGpuFabricState_t state;
    if (!gpuFabricInfo)
        NVML_RETURN(NVML_ERROR_INVALID_ARGUMENT);
    nvmlReturn_t r = fabric_state(g, &state);
    if (r == NVML_SUCCESS) {
        memset(gpuFabricInfo, 0, sizeof *gpuFabricInfo);
        gpuFabricInfo->status = NVML_SUCCESS;
        gpuFabricInfo->state = state;
    }
    NVML_RETURN(r);
}

/* The caller says which struct it passes in its version field (v2, or v3
 * with the health summary). */
nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t *gpuFabricInfo)
{
    NVML_ENTER_GPU(device);
    nvmlGpuFabricState_t state;
    if (!gpuFabricInfo)
        NVML_RETURN(NVML_ERROR_INVALID_ARGUMENT);
    unsigned version = gpuFabricInfo->version;
    if (version != nvmlGpuFabricInfo_v2 && version != nvmlGpuFabricInfo_v3)
        NVML_RETURN(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    nvmlReturn_t r = fabric_state(g, &state);
    if (r != NVML_SUCCESS)
        NVML_RETURN(r);
    nvmlGpuFabricInfo_v3_t info;
    memset(&info, 0, sizeof info);
    info.version = version;
    info.status = NVML_SUCCESS;
    info.state = state;
    info.healthSummary = state == NVML_GPU_FABRIC_STATE_COMPLETED ? NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY
                                                                  : NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED;
    /* v2 is v3 without its last member: copy no more than the caller has */
    memcpy(gpuFabricInfo, &info,
           version == nvmlGpuFabricInfo_v3 ? sizeof(nvmlGpuFabricInfo_v3_t) : sizeof(nvmlGpuFabricInfo_v2_t));
    NVML_RETURN(NVML_SUCCESS);
}

/* ---- PCIe ---- */

/* x16 at the generation whose per-direction rate the hwspec gives
 * (15.75 GB/s Gen3, 31.5 Gen4, 63 Gen5). */
static nvmlReturn_t pcie(nvmlDevice_t device, unsigned int *out, int width)
{
    const struct nvml_gpu *g = nvml_gpu(device);
    if (!g || !out)
        return NVML_ERROR_INVALID_ARGUMENT;
    double gbps = g->spec->perf.pcie_gbps;
    *out = width ? 16 : gbps >= 60 ? 5 : gbps >= 30 ? 4 : gbps >= 15 ? 3 : 2;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int *currLinkGen)
{
    NVML_CALL(pcie(device, currLinkGen, 0));
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int *maxLinkGen)
{
    NVML_CALL(pcie(device, maxLinkGen, 0));
}

nvmlReturn_t nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int *maxLinkGenDevice)
{
    NVML_CALL(pcie(device, maxLinkGenDevice, 0));
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int *currLinkWidth)
{
    NVML_CALL(pcie(device, currLinkWidth, 1));
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int *maxLinkWidth)
{
    NVML_CALL(pcie(device, maxLinkWidth, 1));
}

/* ---- affinity ---- */

/* Bits 0..n-1 set in a mask of size words (64 bits per unsigned long). */
static void set_mask(unsigned long *mask, unsigned size, long n)
{
    const unsigned bits = 8 * sizeof *mask;
    for (unsigned w = 0; w < size; w++) {
        long left = n - (long)(w * bits);
        mask[w] = left >= (long)bits ? ~0ul : left > 0 ? (1ul << left) - 1 : 0;
    }
}

static nvmlReturn_t cpu_affinity(nvmlDevice_t device, unsigned size, unsigned long *set, nvmlAffinityScope_t scope)
{
    if (!nvml_gpu(device) || !size || !set || scope > NVML_AFFINITY_SCOPE_SOCKET)
        return NVML_ERROR_INVALID_ARGUMENT;
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    set_mask(set, size, ncpu > 0 ? ncpu : 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t device, unsigned int cpuSetSize, unsigned long *cpuSet)
{
    NVML_CALL(cpu_affinity(device, cpuSetSize, cpuSet, NVML_AFFINITY_SCOPE_NODE));
}

nvmlReturn_t nvmlDeviceGetCpuAffinityWithinScope(nvmlDevice_t device, unsigned int cpuSetSize,
                                                 unsigned long *cpuSet, nvmlAffinityScope_t scope)
{
    NVML_CALL(cpu_affinity(device, cpuSetSize, cpuSet, scope));
}

/* The NUMA nodes of this machine (/sys/devices/system/node/nodeN); node 0
 * where that cannot be read. */
static void numa_nodes(unsigned long *set, unsigned size)
{
    const unsigned bits = 8 * sizeof *set;
    int any = 0;
    memset(set, 0, size * sizeof *set);
    DIR *d = opendir("/sys/devices/system/node");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        unsigned node;
        char end;
        if (sscanf(e->d_name, "node%u%c", &node, &end) == 1 && node < size * bits) {
            set[node / bits] |= 1ul << node % bits;
            any = 1;
        }
    }
    if (d)
        closedir(d);
    if (!any)
        set[0] = 1;
}

static nvmlReturn_t memory_affinity(nvmlDevice_t device, unsigned size, unsigned long *set, nvmlAffinityScope_t scope)
{
    if (!nvml_gpu(device) || !size || !set || scope > NVML_AFFINITY_SCOPE_SOCKET)
        return NVML_ERROR_INVALID_ARGUMENT;
    numa_nodes(set, size);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryAffinity(nvmlDevice_t device, unsigned int nodeSetSize, unsigned long *nodeSet,
                                         nvmlAffinityScope_t scope)
{
    NVML_CALL(memory_affinity(device, nodeSetSize, nodeSet, scope));
}
