/* deviceQuery: every device's properties and attributes. (The texture, surface and peer-to-peer lines of the original are left out: no textures, no peer API yet.)
 * Ported to the BIREN Runtime from NVIDIA's CUDA samples, Samples/1_Utilities/deviceQuery
 * (https://github.com/NVIDIA/cuda-samples): cuda -> biren, the kernels rewritten as C functions,
 * the program's structure and its own result check kept. The original carries this notice:
 *
 * Copyright (c) 2022, NVIDIA CORPORATION. All rights reserved.
 *
 * Redistribution and use in source and binary forms, with or without modification, are
 * permitted provided that the following conditions are met:
 *  * Redistributions of source code must retain the above copyright notice, this list of
 *    conditions and the following disclaimer.
 *  * Redistributions in binary form must reproduce the above copyright notice, this list of
 *    conditions and the following disclaimer in the documentation and/or other materials
 *    provided with the distribution.
 *  * Neither the name of NVIDIA CORPORATION nor the names of its contributors may be used to
 *    endorse or promote products derived from this software without specific prior written
 *    permission.
 *
 * THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS ``AS IS'' AND ANY EXPRESS OR IMPLIED
 * WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND
 * FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT OWNER OR
 * CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR
 * CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR
 * SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY
 * THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR
 * OTHERWISE) ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE
 * POSSIBILITY OF SUCH DAMAGE.
 */
#include "biren_helpers.h"

int main(int argc, char **argv) {
  (void)argc;
  printf("%s Starting...\n\n", argv[0]);
  printf(" BIREN Device Query (Runtime API) version (static linking)\n\n");
  int deviceCount = 0;
  birenError_t error_id = birenInit();
  if (error_id == BIREN_SUCCESS) error_id = birenGetDeviceCount(&deviceCount);
  if (error_id != BIREN_SUCCESS) {
    printf("birenGetDeviceCount returned %d\n-> %s\n", (int)error_id, birenGetErrorString(error_id));
    printf("Result = FAIL\n");
    exit(EXIT_FAILURE);
  }
  if (deviceCount == 0)
    printf("There are no available device(s) that support BIREN\n");
  else
    printf("Detected %d BIREN Capable device(s)\n", deviceCount);
  int driverVersion = 0, runtimeVersion = 0;
  for (int dev = 0; dev < deviceCount; ++dev) {
    checkBirenErrors(birenSetDevice(dev));
    birenDeviceProp deviceProp;
    checkBirenErrors(birenGetDeviceProperties(&deviceProp, dev));
    printf("\nDevice %d: \"%s\"\n", dev, deviceProp.name);
    checkBirenErrors(birenDriverGetVersion(&driverVersion));
    checkBirenErrors(birenRuntimeGetVersion(&runtimeVersion));
    printf("  BIREN Driver Version / Runtime Version         %d.%d / %d.%d\n", driverVersion / 1000,
           (driverVersion % 100) / 10, runtimeVersion / 1000, (runtimeVersion % 100) / 10);
    printf("  BIREN Capability Major/Minor version number:   %d.%d\n", deviceProp.major, deviceProp.minor);
    printf("  Total amount of global memory:                 %.0f MBytes (%llu bytes)\n",
           (float)deviceProp.totalGlobalMem / 1048576.0f, (unsigned long long)deviceProp.totalGlobalMem);
    printf("  (%03d) Multiprocessors, (%03d) Cores/MP:         %d Cores\n", deviceProp.multiProcessorCount,
           convertSMVer2Cores(deviceProp.major, deviceProp.minor),
           convertSMVer2Cores(deviceProp.major, deviceProp.minor) * deviceProp.multiProcessorCount);
    int clockRate, memoryClockRate;
    checkBirenErrors(birenDeviceGetAttribute(&clockRate, birenDevAttrClockRate, dev));
    printf("  GPU Max Clock rate:                            %.0f MHz (%0.2f GHz)\n", clockRate * 1e-3f, clockRate * 1e-6f);
    checkBirenErrors(birenDeviceGetAttribute(&memoryClockRate, birenDevAttrMemoryClockRate, dev));
    printf("  Memory Clock rate:                             %.0f Mhz\n", memoryClockRate * 1e-3f);
    printf("  Memory Bus Width:                              %d-bit\n", deviceProp.memoryBusWidth);
    if (deviceProp.l2CacheSize) printf("  L2 Cache Size:                                 %d bytes\n", deviceProp.l2CacheSize);
    printf("  Total amount of constant memory:               %zu bytes\n", deviceProp.totalConstMem);
    printf("  Total amount of shared memory per block:       %zu bytes\n", deviceProp.sharedMemPerBlock);
    printf("  Total shared memory per multiprocessor:        %zu bytes\n", deviceProp.sharedMemPerMultiprocessor);
    printf("  Total number of registers available per block: %d\n", deviceProp.regsPerBlock);
    printf("  Warp size:                                     %d\n", deviceProp.warpSize);
    printf("  Maximum number of threads per multiprocessor:  %d\n", deviceProp.maxThreadsPerMultiProcessor);
    printf("  Maximum number of threads per block:           %d\n", deviceProp.maxThreadsPerBlock);
    printf("  Max dimension size of a thread block (x,y,z): (%d, %d, %d)\n", deviceProp.maxThreadsDim[0],
           deviceProp.maxThreadsDim[1], deviceProp.maxThreadsDim[2]);
    printf("  Max dimension size of a grid size    (x,y,z): (%d, %d, %d)\n", deviceProp.maxGridSize[0],
           deviceProp.maxGridSize[1], deviceProp.maxGridSize[2]);
    printf("  Maximum memory pitch:                          %zu bytes\n", deviceProp.memPitch);
    int gpuOverlap, kernelExecTimeout, computeMode;
    checkBirenErrors(birenDeviceGetAttribute(&gpuOverlap, birenDevAttrGpuOverlap, dev));
    printf("  Concurrent copy and kernel execution:          %s with %d copy engine(s)\n", gpuOverlap ? "Yes" : "No",
           deviceProp.asyncEngineCount);
    checkBirenErrors(birenDeviceGetAttribute(&kernelExecTimeout, birenDevAttrKernelExecTimeout, dev));
    printf("  Run time limit on kernels:                     %s\n", kernelExecTimeout ? "Yes" : "No");
    printf("  Integrated GPU sharing Host Memory:            %s\n", deviceProp.integrated ? "Yes" : "No");
    printf("  Support host page-locked memory mapping:       %s\n", deviceProp.canMapHostMemory ? "Yes" : "No");
    printf("  Device has ECC support:                        %s\n", deviceProp.ECCEnabled ? "Enabled" : "Disabled");
    printf("  Device supports Unified Addressing (UVA):      %s\n", deviceProp.unifiedAddressing ? "Yes" : "No");
    printf("  Device supports Managed Memory:                %s\n", deviceProp.managedMemory ? "Yes" : "No");
    int preemption;
    checkBirenErrors(birenDeviceGetAttribute(&preemption, birenDevAttrComputePreemptionSupported, dev));
    printf("  Device supports Compute Preemption:            %s\n", preemption ? "Yes" : "No");
    printf("  Supports Cooperative Kernel Launch:            %s\n", deviceProp.cooperativeLaunch ? "Yes" : "No");
    printf("  Device PCI Domain ID / Bus ID / location ID:   %d / %d / %d\n", deviceProp.pciDomainID, deviceProp.pciBusID,
           deviceProp.pciDeviceID);
    const char *sComputeMode[] = {"Default (multiple host threads can use ::birenSetDevice() with device simultaneously)",
                                  "Exclusive (only one host thread in one process is able to use ::birenSetDevice() with this device)",
                                  "Prohibited (no host thread can use ::birenSetDevice() with this device)",
                                  "Exclusive Process (many threads in one process is able to use ::birenSetDevice() with this device)",
                                  "Unknown", NULL};
    checkBirenErrors(birenDeviceGetAttribute(&computeMode, birenDevAttrComputeMode, dev));
    printf("  Compute Mode:\n     < %s >\n", sComputeMode[computeMode]);
  }
  printf("\ndeviceQuery, BIREN Driver = BIRENRT, BIREN Driver Version = %d.%d, BIREN Runtime Version = %d.%d, NumDevs = %d\n",
         driverVersion / 1000, (driverVersion % 100) / 10, runtimeVersion / 1000, (runtimeVersion % 100) / 10, deviceCount);
  printf("Result = PASS\n");
  exit(EXIT_SUCCESS);
}
