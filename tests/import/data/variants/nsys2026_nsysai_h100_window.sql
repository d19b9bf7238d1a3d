CREATE TABLE StringIds (
    -- Consolidation of repetitive string values.

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- ID reference value.
    value                       TEXT      NOT NULL                     -- String value.
);
INSERT INTO StringIds VALUES (32, '[NSys Comms]');
INSERT INTO StringIds VALUES (33, '[NSys]');
INSERT INTO StringIds VALUES (45, '*2CommsProcesso');
INSERT INTO StringIds VALUES (48, 'CUPTI worker th');
INSERT INTO StringIds VALUES (49, 'cuda-EvtHandlr');
INSERT INTO StringIds VALUES (56, 'python3');
INSERT INTO StringIds VALUES (57, 'cuda0000300000d');
INSERT INTO StringIds VALUES (129, 'pt_tcpstore_uv');
INSERT INTO StringIds VALUES (130, 'pt_nccl_watchdg');
INSERT INTO StringIds VALUES (131, 'pt_nccl_heartbt');
INSERT INTO StringIds VALUES (12507, 'cudaMemcpyAsync_v3020');
INSERT INTO StringIds VALUES (92644, 'cudaEventCreateWithFlags_v3020');
INSERT INTO StringIds VALUES (329663, 'cudaStreamIsCapturing_v10000');
INSERT INTO StringIds VALUES (331011, 'cudaEventRecordWithFlags_v11010');
INSERT INTO StringIds VALUES (331012, 'cudaEventDestroy_v3020');
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
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (155459602503, 155459607344, 0, 281476838981743, 1456112, 12507, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (155459621623, 155459629227, 0, 281476838981743, 1456121, 12507, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (155459645755, 155459649916, 0, 281476838981743, 1456136, 12507, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (155459662093, 155459672025, 0, 281476838981743, 1456145, 12507, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (155459688664, 155459692294, 0, 281476838981743, 1456160, 12507, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (155459604507, 155459607248, 0, 281476855758960, 1494723, 92644, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (155459609663, 155459610623, 0, 281476855758960, 1494728, 329663, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (155459610978, 155459614506, 0, 281476855758960, 1494729, 331011, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (155459616216, 155459617330, 0, 281476855758960, 1494733, 331012, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (155459650004, 155459666760, 0, 281476855758960, 1494745, 12507, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (155459689786, 155459702744, 0, 281476855758960, 1494754, 12507, 0, NULL);
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
    sharedMemoryRequestedPercentage   INTEGER,                         -- Shared memory requested percentage.
    tensorSizeMinusOneElements   TEXT      NOT NULL                    -- TMA descriptor tensor size minus one elements array.
);
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
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (155888544771, 155895815141, 1, 2, 0, 15, 1494745, 281476855758848, 201326592, 1, NULL, 1, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (155895823589, 155895956325, 1, 2, 0, 15, 1494754, 281476855758848, 201326592, 8, NULL, 2, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (155895859785, 155895862921, 0, 1, 0, 7, 1456112, 281476838981632, 8192, 1, NULL, 1, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (155895868105, 155895869353, 0, 1, 0, 7, 1456121, 281476838981632, 8192, 8, NULL, 2, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (155895878057, 155898302875, 0, 1, 0, 7, 1456136, 281476838981632, 67108864, 1, NULL, 1, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (155898309212, 155898353788, 0, 1, 0, 7, 1456145, 281476838981632, 67108864, 8, NULL, 2, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (155898357308, 155898360124, 0, 1, 0, 7, 1456160, 281476838981632, 16384, 1, NULL, 1, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    value                       INTEGER   NOT NULL,                    -- Value assigned to memory.
    bytes                       INTEGER   NOT NULL,                    -- Number of bytes set (B).
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    memKind                     INTEGER                                -- REFERENCES ENUM_CUDA_MEM_KIND(id)
);
CREATE TABLE NVTX_EVENTS (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER,                               -- Event end timestamp (ns).
    eventType                   INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_TYPE(id)
    rangeId                     INTEGER,                               -- Correlation ID returned from a nvtxRangeStart call.
    category                    INTEGER,                               -- User-controlled ID that can be used to group events.
    color                       INTEGER,                               -- Encoded ARGB color value.
    text                        TEXT,                                  -- Explicit name/text (non-registered string)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    endGlobalTid                INTEGER,                               -- Serialized GlobalId.
    textId                      INTEGER,                               -- REFERENCES StringIds(id) -- Registered NVTX domain/string
    domainId                    INTEGER,                               -- User-controlled ID that can be used to group events.
    uint64Value                 INTEGER,                               -- One of possible payload value union members.
    int64Value                  INTEGER,                               -- One of possible payload value union members.
    doubleValue                 REAL,                                  -- One of possible payload value union members.
    uint32Value                 INTEGER,                               -- One of possible payload value union members.
    int32Value                  INTEGER,                               -- One of possible payload value union members.
    floatValue                  REAL,                                  -- One of possible payload value union members.
    jsonTextId                  INTEGER,                               -- One of possible payload value union members.
    jsonText                    TEXT,                                  -- One of possible payload value union members.
    binaryData                  TEXT                                   -- Binary payload. See docs for format.
);
INSERT INTO NVTX_EVENTS VALUES (155459454098, 155459788668, 59, NULL, NULL, NULL, 'FSDP::pre_forward (encoder.block.18.layer.0), op_id = 315285', 281476838981743, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO NVTX_EVENTS VALUES (155459572054, 155459906675, 59, NULL, NULL, NULL, 'FSDP::pre_forward (encoder.block.18.layer.0), op_id = 315264', 281476855758960, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO NVTX_EVENTS VALUES (155459592954, 155459609476, 59, NULL, NULL, NULL, 'aten::to, op_id = 315291', 281476838981743, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO NVTX_EVENTS VALUES (155459593711, 155459609166, 59, NULL, NULL, NULL, 'aten::_to_copy, op_id = 315292', 281476838981743, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO NVTX_EVENTS VALUES (155459600190, 155459608817, 59, NULL, NULL, NULL, 'aten::copy_, op_id = 315294', 281476838981743, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO NVTX_EVENTS VALUES (155459619823, 155459631281, 59, NULL, NULL, NULL, 'aten::copy_, op_id = 315295', 281476838981743, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO NVTX_EVENTS VALUES (155459630123, 155459670441, 59, NULL, NULL, NULL, 'aten::to, op_id = 315265', 281476855758960, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO NVTX_EVENTS VALUES (155459631544, 155459669900, 59, NULL, NULL, NULL, 'aten::_to_copy, op_id = 315266', 281476855758960, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO NVTX_EVENTS VALUES (155459636900, 155459643118, 59, NULL, NULL, NULL, 'aten::empty_strided, op_id = 315267', 281476855758960, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO NVTX_EVENTS VALUES (155459637211, 155459651628, 59, NULL, NULL, NULL, 'aten::to, op_id = 315296', 281476838981743, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO NVTX_EVENTS VALUES (155459637796, 155459651361, 59, NULL, NULL, NULL, 'aten::_to_copy, op_id = 315297', 281476838981743, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO NVTX_EVENTS VALUES (155459639524, 155459643423, 59, NULL, NULL, NULL, 'aten::empty_strided, op_id = 315298', 281476838981743, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO NVTX_EVENTS VALUES (155459643900, 155459651078, 59, NULL, NULL, NULL, 'aten::copy_, op_id = 315299', 281476838981743, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO NVTX_EVENTS VALUES (155459644403, 155459669370, 59, NULL, NULL, NULL, 'aten::copy_, op_id = 315268', 281476855758960, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO NVTX_EVENTS VALUES (155459660150, 155459673781, 59, NULL, NULL, NULL, 'aten::copy_, op_id = 315300', 281476838981743, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO NVTX_EVENTS VALUES (155459680110, 155459694294, 59, NULL, NULL, NULL, 'aten::to, op_id = 315301', 281476838981743, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO NVTX_EVENTS VALUES (155459680637, 155459693988, 59, NULL, NULL, NULL, 'aten::_to_copy, op_id = 315302', 281476838981743, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO NVTX_EVENTS VALUES (155459682078, 155459686056, 59, NULL, NULL, NULL, 'aten::empty_strided, op_id = 315303', 281476838981743, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO NVTX_EVENTS VALUES (155459686476, 155459705456, 59, NULL, NULL, NULL, 'aten::copy_, op_id = 315269', 281476855758960, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO NVTX_EVENTS VALUES (155459686640, 155459693504, 59, NULL, NULL, NULL, 'aten::copy_, op_id = 315304', 281476838981743, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
CREATE TABLE PROCESSES (
    -- Names and identifiers of processes captured in the report.

    globalPid                   INTEGER,                               -- Serialized GlobalId.
    pid                         INTEGER,                               -- The process ID.
    name                        TEXT                                   -- The process name.
);
INSERT INTO PROCESSES VALUES (281476838981632, 111, 'python3');
INSERT INTO PROCESSES VALUES (281476855758848, 112, 'python3');
CREATE TABLE ThreadNames (
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Thread name
    priority                    INTEGER,                               -- Priority of the thread.
    globalTid                   INTEGER                                -- Serialized GlobalId.
);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981743);
INSERT INTO ThreadNames VALUES (33, 20, 281476838981748);
INSERT INTO ThreadNames VALUES (32, 20, 281476838981749);
INSERT INTO ThreadNames VALUES (45, 20, 281476838981752);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981755);
INSERT INTO ThreadNames VALUES (57, 20, 281476838981758);
INSERT INTO ThreadNames VALUES (48, 20, 281476838981760);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981762);
INSERT INTO ThreadNames VALUES (49, 20, 281476838981763);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981765);
INSERT INTO ThreadNames VALUES (129, 20, 281476838981789);
INSERT INTO ThreadNames VALUES (130, 20, 281476838981794);
INSERT INTO ThreadNames VALUES (130, 20, 281476838981796);
INSERT INTO ThreadNames VALUES (131, 20, 281476838981797);
INSERT INTO ThreadNames VALUES (131, 20, 281476838981798);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981799);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981801);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981803);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981804);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981805);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981809);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981810);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981811);
INSERT INTO ThreadNames VALUES (130, 20, 281476838981814);
INSERT INTO ThreadNames VALUES (131, 20, 281476838981816);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981818);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981820);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981822);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981825);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981827);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981829);
INSERT INTO ThreadNames VALUES (130, 20, 281476838981831);
INSERT INTO ThreadNames VALUES (131, 20, 281476838981833);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981835);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981836);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981840);
INSERT INTO ThreadNames VALUES (130, 20, 281476838981842);
INSERT INTO ThreadNames VALUES (131, 20, 281476838981843);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981845);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981847);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981848);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981851);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981852);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981856);
INSERT INTO ThreadNames VALUES (130, 20, 281476838981857);
INSERT INTO ThreadNames VALUES (131, 20, 281476838981859);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981862);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981864);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981866);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981884);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981885);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981888);
INSERT INTO ThreadNames VALUES (130, 20, 281476838981889);
INSERT INTO ThreadNames VALUES (131, 20, 281476838981890);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981900);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981901);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981903);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981905);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981909);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981910);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981912);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981914);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981916);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981919);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981920);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981922);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981924);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981926);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981927);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981929);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981931);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981934);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981936);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981938);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981940);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981941);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981945);
INSERT INTO ThreadNames VALUES (56, 20, 281476838981953);
INSERT INTO ThreadNames VALUES (56, 20, 281476838982116);
INSERT INTO ThreadNames VALUES (56, 20, 281476855758960);
INSERT INTO ThreadNames VALUES (33, 20, 281476855758966);
INSERT INTO ThreadNames VALUES (32, 20, 281476855758967);
INSERT INTO ThreadNames VALUES (45, 20, 281476855758969);
INSERT INTO ThreadNames VALUES (56, 20, 281476855758970);
INSERT INTO ThreadNames VALUES (57, 20, 281476855758972);
INSERT INTO ThreadNames VALUES (48, 20, 281476855758973);
INSERT INTO ThreadNames VALUES (56, 20, 281476855758975);
INSERT INTO ThreadNames VALUES (49, 20, 281476855758977);
INSERT INTO ThreadNames VALUES (56, 20, 281476855758980);
INSERT INTO ThreadNames VALUES (49, 20, 281476855758998);
INSERT INTO ThreadNames VALUES (130, 20, 281476855759006);
INSERT INTO ThreadNames VALUES (131, 20, 281476855759007);
INSERT INTO ThreadNames VALUES (130, 20, 281476855759008);
INSERT INTO ThreadNames VALUES (131, 20, 281476855759009);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759011);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759016);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759018);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759022);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759023);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759024);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759028);
INSERT INTO ThreadNames VALUES (130, 20, 281476855759029);
INSERT INTO ThreadNames VALUES (131, 20, 281476855759031);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759033);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759035);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759037);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759040);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759042);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759044);
INSERT INTO ThreadNames VALUES (130, 20, 281476855759046);
INSERT INTO ThreadNames VALUES (131, 20, 281476855759048);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759050);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759053);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759054);
INSERT INTO ThreadNames VALUES (130, 20, 281476855759055);
INSERT INTO ThreadNames VALUES (131, 20, 281476855759057);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759060);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759062);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759065);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759069);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759070);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759071);
INSERT INTO ThreadNames VALUES (130, 20, 281476855759074);
INSERT INTO ThreadNames VALUES (131, 20, 281476855759076);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759077);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759079);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759081);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759091);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759102);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759103);
INSERT INTO ThreadNames VALUES (130, 20, 281476855759107);
INSERT INTO ThreadNames VALUES (131, 20, 281476855759108);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759114);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759115);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759118);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759120);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759122);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759123);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759124);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759127);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759129);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759131);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759133);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759134);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759137);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759139);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759141);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759144);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759146);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759148);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759149);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759151);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759153);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759155);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759160);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759168);
INSERT INTO ThreadNames VALUES (56, 20, 281476855759328);
