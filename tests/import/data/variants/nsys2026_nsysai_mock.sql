CREATE TABLE StringIds (
    -- Consolidation of repetitive string values.

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- ID reference value.
    value                       TEXT      NOT NULL                     -- String value.
);
INSERT INTO StringIds VALUES (101, 'python');
INSERT INTO StringIds VALUES (114, 'cuda00001800007');
INSERT INTO StringIds VALUES (115, '[NSys]');
INSERT INTO StringIds VALUES (116, '[NSys Comms]');
INSERT INTO StringIds VALUES (117, '*2CommsProcesso');
INSERT INTO StringIds VALUES (119, 'cuda-EvtHandlr');
INSERT INTO StringIds VALUES (123, 'CUPTI worker thread');
INSERT INTO StringIds VALUES (127, 'cuModuleGetLoadingMode');
INSERT INTO StringIds VALUES (128, 'cudaGetDeviceProperties_v12000');
INSERT INTO StringIds VALUES (132, '_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_');
INSERT INTO StringIds VALUES (133, '_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_14func_wrapper_tIfZNS0_11sum_functorIfffEclERNS_14TensorIteratorEEUlffE_EEjfLi4EEEEEvT1_');
INSERT INTO StringIds VALUES (134, 'cudaStreamIsCapturing_v10000');
INSERT INTO StringIds VALUES (135, 'cudaMalloc_v3020');
INSERT INTO StringIds VALUES (138, 'void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, std::array<char *, (unsigned long)1>>(int, T2, T3)');
INSERT INTO StringIds VALUES (139, 'vectorized_elementwise_kernel');
INSERT INTO StringIds VALUES (140, 'cudaLaunchKernel_v7000');
INSERT INTO StringIds VALUES (141, 'void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator ()(at::TensorIterator &)::[lambda(float, float) (instance 1)]>, unsigned int, float, (int)4>>(T3)');
INSERT INTO StringIds VALUES (142, 'reduce_kernel');
INSERT INTO StringIds VALUES (143, 'cudaHostAlloc_v3020');
INSERT INTO StringIds VALUES (144, 'cudaMemcpyAsync_v3020');
INSERT INTO StringIds VALUES (145, 'cudaStreamSynchronize_v3020');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    eventClass                  INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_CLASS(id)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    correlationId               INTEGER,                               -- ID used to identify events that this function call has triggered.
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Function name
    returnValue                 INTEGER   NOT NULL,                    -- Return value of the function call.
    callchainId                 INTEGER                                -- REFERENCES CUDA_CALLCHAINS(id)
);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1304349703, 1304352711, 1, 283004824020018, 1, 127, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1327103658, 1327112413, 0, 283004824020018, 127, 128, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1498719457, 1499301305, 0, 283004824020018, 134, 134, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1499307953, 1500077430, 0, 283004824020018, 135, 135, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1500271671, 1517708070, 0, 283004824020018, 143, 140, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1518030155, 1535794161, 0, 283004824020018, 159, 140, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1535956590, 1539525531, 0, 283004824020018, 167, 143, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1539568563, 1540158067, 0, 283004824020018, 171, 144, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1540164123, 1540180135, 0, 283004824020018, 172, 145, 0, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    demangledName               INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Kernel function name w/ templates
    shortName                   INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Base kernel function name
    mangledName                 INTEGER,                               -- REFERENCES StringIds(id) -- Raw C++ mangled kernel function name
    launchType                  INTEGER,                               -- REFERENCES ENUM_CUDA_KERNEL_LAUNCH_TYPE(id)
    cacheConfig                 INTEGER,                               -- REFERENCES ENUM_CUDA_FUNC_CACHE_CONFIG(id)
    registersPerThread          INTEGER   NOT NULL,                    -- Number of registers required for each thread executing the kernel.
    gridX                       INTEGER   NOT NULL,                    -- X-dimension grid size.
    gridY                       INTEGER   NOT NULL,                    -- Y-dimension grid size.
    gridZ                       INTEGER   NOT NULL,                    -- Z-dimension grid size.
    blockX                      INTEGER   NOT NULL,                    -- X-dimension block size.
    blockY                      INTEGER   NOT NULL,                    -- Y-dimension block size.
    blockZ                      INTEGER   NOT NULL,                    -- Z-dimension block size.
    staticSharedMemory          INTEGER   NOT NULL,                    -- Static shared memory allocated for the kernel (B).
    dynamicSharedMemory         INTEGER   NOT NULL,                    -- Dynamic shared memory reserved for the kernel (B).
    localMemoryPerThread        INTEGER   NOT NULL,                    -- Amount of local memory reserved for each thread (B).
    localMemoryTotal            INTEGER   NOT NULL,                    -- Total amount of local memory reserved for the kernel (B).
    gridId                      INTEGER   NOT NULL,                    -- Unique grid ID of the kernel assigned at runtime.
    sharedMemoryExecuted        INTEGER,                               -- Shared memory size set by the driver.
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    sharedMemoryLimitConfig     INTEGER,                               -- REFERENCES ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG(id)
    qmdBulkReleaseDone          INTEGER,                               -- QMD bulk release done timestamp from CWD events.
    qmdPreexitDone              INTEGER,                               -- QMD pre-exit done timestamp from CWD events.
    qmdLastCtaDone              INTEGER,                               -- QMD last CTA done timestamp from CWD events.
    graphId                     INTEGER,                               -- Kernel graph ID.
    clusterX                    INTEGER,                               -- Cluster X dimension.
    clusterY                    INTEGER,                               -- Cluster Y dimension.
    clusterZ                    INTEGER,                               -- Cluster Z dimension.
    clusterSchedulingPolicy     INTEGER,                               -- Cluster scheduling policy.
    maxPotentialClusterSize     INTEGER,                               -- Maximum potential cluster size.
    maxActiveClusters           INTEGER,                               -- Maximum active clusters.
    sharedMemoryRequestedPercentage   INTEGER                          -- Shared memory requested percentage.
);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1517727052, 1517728492, 0, 1, 0, 7, 143, 283004823928832, 138, 139, 132, 1, 1, 16, 1, 1, 1, 128, 1, 1, 0, 0, 0, 95813632, 1, 16384, NULL, 0, NULL, NULL, NULL, NULL, 0, 0, 0, 0, 0, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1535979030, 1535981719, 0, 1, 0, 7, 159, 283004823928832, 141, 142, 133, 1, 1, 28, 1, 1, 1, 16, 1, 1, 16, 0, 0, 95813632, 2, 32768, NULL, 0, NULL, NULL, NULL, NULL, 0, 0, 0, 0, 0, 0, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    bytes                       INTEGER   NOT NULL,                    -- Number of bytes transferred (B).
    copyKind                    INTEGER   NOT NULL,                    -- REFERENCES ENUM_CUDA_MEMCPY_OPER(id)
    deprecatedSrcId             INTEGER,                               -- Deprecated, use srcDeviceId instead.
    srcKind                     INTEGER,                               -- REFERENCES ENUM_CUDA_MEM_KIND(id)
    dstKind                     INTEGER,                               -- REFERENCES ENUM_CUDA_MEM_KIND(id)
    srcDeviceId                 INTEGER,                               -- Source device ID.
    srcContextId                INTEGER,                               -- Source context ID.
    dstDeviceId                 INTEGER,                               -- Destination device ID.
    dstContextId                INTEGER,                               -- Destination context ID.
    migrationCause              INTEGER,                               -- REFERENCES ENUM_CUDA_UNIF_MEM_MIGRATION(id)
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    virtualAddress              INTEGER,                               -- Virtual base address of the page/s being transferred.
    copyCount                   INTEGER                                -- The total number of memcopy operations traced in this record. In CUDA MemcpyBatchAsync APIs, multiple memcpy operations may be batched together for optimization purposes based on certain heuristics.
);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (1540178479, 1540180111, 0, 1, 0, 7, 171, 283004823928832, 4, 2, NULL, 2, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1);
CREATE TABLE PROCESSES (
    -- Names and identifiers of processes captured in the report.

    globalPid                   INTEGER,                               -- Serialized GlobalId.
    pid                         INTEGER,                               -- The process ID.
    name                        TEXT                                   -- The process name.
);
INSERT INTO PROCESSES VALUES (283004823928832, 91186, '/home/rich-wsl/nsys-tui/.venv-gpu/bin/python');
CREATE TABLE ThreadNames (
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Thread name
    priority                    INTEGER,                               -- Priority of the thread.
    globalTid                   INTEGER                                -- Serialized GlobalId.
);
INSERT INTO ThreadNames VALUES (101, 20, 283004824020018);
INSERT INTO ThreadNames VALUES (114, 20, 283004824020042);
INSERT INTO ThreadNames VALUES (115, 10, 283004824020043);
INSERT INTO ThreadNames VALUES (116, 10, 283004824020044);
INSERT INTO ThreadNames VALUES (117, 20, 283004824020045);
INSERT INTO ThreadNames VALUES (123, 10, 283004824020046);
INSERT INTO ThreadNames VALUES (101, 20, 283004824020058);
INSERT INTO ThreadNames VALUES (119, 20, 283004824020059);
INSERT INTO ThreadNames VALUES (101, 20, 283004824020060);
