/* futuredisk — faultmodels: the built-in disk profiles.
 *
 * Every profile says in `sourced` which of its numbers come from a
 * datasheet or report and in `estimated` which are ours.  The three
 * roadmap disks are the Seagate roadmap quoted in the report on the 2006
 * Linux File Systems Workshop (V. Henson, LWN,
 * https://lwn.net/Articles/190222/): capacity, bandwidth and
 * average read seek are theirs; bandwidth is the mean effective rate, so a
 * full read takes exactly capacity / bandwidth (4,000 s, 8,000 s, 12,800 s).
 *
 * The workshop's table carried on to 2030 starts from the HAMR drive that
 * ships today, Seagate's Exos M (Mozaic 3+): 30 TB on ten 3 TB platters,
 * 275 MB/s outer by datasheet, 292 MB/s measured, 7200 rpm, 512 MB cache
 * (StorageReview,
 * https://www.storagereview.com/fr/review/seagate-exos-m-30tb-review-hamr-ing-storage-density;
 * AnandTech via
 * http://www.awof.org/seagate-unveils-mozaic-3-hdd-platform-as-hamr-readies-for-volume-ramp.html).
 * The roadmap points take their capacities from what is announced for
 * each year: 44 TB Mozaic 4+ in production in the first half of 2026
 * (https://www.techspot.com/news/111584-seagate-now-shipping-hamr-disk-drives-holding-up.html,
 * https://www.gamereactor.eu/seagate-packs-44tb-into-a-single-drive-using-hamr-tech-1688523/),
 * 60 TB in 2028 on the IEEE IRDS mass-storage roadmap
 * (https://venomo.us/2024/10/04/60tb-hard-drives-arriving-in-2028-according-to-industry-roadmap/),
 * more than 7 TB per platter in the early 2030s
 * (https://epium.com/news/seagate-hamr-6-9-tb-per-platter-55-tb-hdds) and
 * 100 TB by 2029-2030 (Western Digital,
 * https://chipp.in/hardware/are-we-finally-going-to-see-100tb-hard-drives;
 * Seagate's 2021 roadmap, https://pipedot.org/5F4YR); 70 TB in 2030, ten
 * platters of 7 TB, is our reading of the last two.  Their bandwidth is
 * ours: a track's bit rate grows with linear density, about the square
 * root of areal density, so the outer zone is the Exos M's 275 MB/s times
 * sqrt (TB per platter / 3).  Rotation, seeks and heads are held where
 * nearline drives have stayed for a decade: 7200 rpm, 8.0 ms read and
 * 8.6 ms write average seek (Ultrastar He10 datasheet,
 * https://documents.westerndigital.com/content/dam/doc-library/en_us/assets/public/western-digital/product/data-center-drives/ultrastar-hdd-sata-series/ultrastar-he10/data-sheet-ultrastar-he10.pdf).
 */
#include <stdio.h>
#include <string.h>

#include "faultmodels/profile.h"
#include "faultmodels/error.h"

#define MS(x)   ((uint64_t)((x)*1e6 + 0.5))
#define MBPS(x) ((uint64_t)((x)*1e6 + 0.5))
#define MIB(x)  ((uint64_t)(x) << 20)
#define GB(x)   ((uint64_t)((x)*1e9 + 0.5))

/* Shared by every 7200 rpm disk unless it says otherwise [E]: the
 * controller overhead (0.1 ms, between ublk-disksim's 30 us and DiskSim's
 * Cheetah figures) and a 1 ms head switch (DiskSim 4 TB model).
 * ROTATING_COMMON is all of it but the kind: shingled disks share it.
 */
#define HDD_COMMON .kind = FM_KIND_HDD, ROTATING_COMMON
#define ROTATING_COMMON                                                        \
  .zones = 24, .command_ns = MS (0.1), .track_switch_ns = MS (1.0)

/* NCQ as SATA has it: 32 commands (Serial ATA 2.6, native command
 * queuing); the 500 ms age cap is ublk-disksim's documented assumption [E]
 * (https://github.com/lumir-sliva/ublk-disksim).  A nearline drive
 * reorders over the whole queue: QD32 random reads reach 2.5x QD1, as
 * the Exos X24 / HC580 datasheets' 168-212 IOPS against ~80 at QD1.
 */
#define HDD_QUEUE .queue_depth = 32, .queue_age_ns = MS (500)

/* A consumer drive holds 32 commands but gains far less from them: a
 * Seagate ST2000DM006 does 57.6 IOPS at QD1 and 93.6 at QD32, 1.6x
 * (ublk-disksim's measurement of a real drive).  A reordering window of
 * 8 reproduces that ratio [E].
 */
#define CONSUMER_QUEUE .queue_depth = 8, .queue_age_ns = MS (500)

static const struct fm_profile builtins[] = {
    {
        .name = "roadmap-2006",
        .description = "Seagate roadmap disk of 2006: 500 GB, 1000 Mb/s, 8 ms",
        .sourced = "capacity 500 GB, bandwidth 125 MB/s (1000 Mb/s), average "
                   "read seek 8.0 ms: Seagate roadmap via LWN 190222 (2006)",
        .estimated = "7200 rpm, zone ratio 2.0, 4 heads, 512 B sectors, seeks "
                     "0.8/16 ms, settle 1.5 ms, write seeks 0.9/9.0 ms, 16 MiB "
                     "cache, 1 MiB read-ahead, SATA 3 Gb/s bus",
        HDD_COMMON,
        HDD_QUEUE,
        .capacity = GB (500),
        .design_capacity = GB (500),
        .sector = 512,
        .bandwidth = MBPS (125),
        .rpm = 7200,
        .zone_ratio = 2.0,
        .heads = 4,
        .seek_t2t_ns = MS (0.8),
        .seek_avg_ns = MS (8.0),
        .seek_full_ns = MS (16),
        .seek_settle_ns = MS (1.5),
        .write_settle_t2t_ns = MS (0.1),
        .write_settle_ns = MS (1.0),
        .interface_bw = MBPS (300),
        .cache_bytes = MIB (16),
        .readahead_bytes = MIB (1),
        .faults = {.erc_ns = MS (120000)}, /* desktop: 2 min */
    },
    {
        .name = "roadmap-2009",
        .description = "Seagate roadmap disk of 2009: 2 TB, 2000 Mb/s, 7.2 ms",
        .sourced = "capacity 2000 GB, bandwidth 250 MB/s (2000 Mb/s), average "
                   "read seek 7.2 ms: Seagate roadmap via LWN 190222 (2006)",
        .estimated = "7200 rpm, zone ratio 2.0, 6 heads, 512 B sectors, seeks "
                     "0.7/14.5 ms, settle 1.4 ms, write seeks 0.8/8.0 ms, 32 "
                     "MiB cache, 2 MiB read-ahead, SATA 6 Gb/s bus",
        HDD_COMMON,
        HDD_QUEUE,
        .capacity = GB (2000),
        .design_capacity = GB (2000),
        .sector = 512,
        .bandwidth = MBPS (250),
        .rpm = 7200,
        .zone_ratio = 2.0,
        .heads = 6,
        .seek_t2t_ns = MS (0.7),
        .seek_avg_ns = MS (7.2),
        .seek_full_ns = MS (14.5),
        .seek_settle_ns = MS (1.4),
        .write_settle_t2t_ns = MS (0.1),
        .write_settle_ns = MS (0.8),
        .interface_bw = MBPS (600),
        .cache_bytes = MIB (32),
        .readahead_bytes = MIB (2),
        .faults = {.erc_ns = MS (120000)}, /* desktop: 2 min */
    },
    {
        .name = "roadmap-2013",
        .description = "Seagate roadmap disk of 2013: 8 TB, 5000 Mb/s, 6.5 ms",
        .sourced = "capacity 8000 GB, bandwidth 625 MB/s (5000 Mb/s), average "
                   "read seek 6.5 ms: Seagate roadmap via LWN 190222 (2006)",
        .estimated = "7200 rpm, zone ratio 2.0, 8 heads, 4 KiB sectors shown "
                     "as 512 B (512e), seeks 0.6/13 ms, settle 1.2 ms, write "
                     "seeks 0.7/7.1 ms, 64 MiB cache, 4 MiB read-ahead, "
                     "unlimited bus (the 833 MB/s outer zone exceeds SATA 6 "
                     "Gb/s)",
        HDD_COMMON,
        HDD_QUEUE,
        .capacity = GB (8000),
        .design_capacity = GB (8000),
        .sector = 4096,
        .bandwidth = MBPS (625),
        .rpm = 7200,
        .zone_ratio = 2.0,
        .heads = 8,
        .seek_t2t_ns = MS (0.6),
        .seek_avg_ns = MS (6.5),
        .seek_full_ns = MS (13),
        .seek_settle_ns = MS (1.2),
        .write_settle_t2t_ns = MS (0.1),
        .write_settle_ns = MS (0.6),
        .interface_bw = 0,
        .cache_bytes = MIB (64),
        .readahead_bytes = MIB (4),
        .faults = {.erc_ns = MS (120000)}, /* desktop: 2 min */
    },
    {
        .name = "cmr-8t-2015",
        .description = "8 TB CMR disk as shipped in 2015: the 2013 roadmap "
                       "capacity at a quarter of its bandwidth",
        .sourced =
            "8 TB drives arrived in 2014-15 at ~200 MB/s outer (HGST He8 "
            "at 205 MB/s, weak secondary source); 128 MiB cache typical of "
            "2015; write seeks +0.1 ms track-to-track (Ultrastar DC HC310 "
            "0.23/0.32 ms), +0.6 ms average (Ultrastar He10 8.0/8.6 ms)",
        .estimated = "7200 rpm, outer 200 MB/s and zone ratio 2.0 (mean 150 "
                     "MB/s), 14 heads, 512e, seeks 0.6/8.0/16 ms, settle 1.5 "
                     "ms (fits DiskSim's extracted 4 TB seek table), 8 MiB "
                     "read-ahead, SATA 6 Gb/s bus",
        HDD_COMMON,
        HDD_QUEUE,
        .capacity = GB (8000),
        .design_capacity = GB (8000),
        .sector = 4096,
        .bandwidth = MBPS (150),
        .rpm = 7200,
        .zone_ratio = 2.0,
        .heads = 14,
        .seek_t2t_ns = MS (0.6),
        .seek_avg_ns = MS (8.0),
        .seek_full_ns = MS (16),
        .seek_settle_ns = MS (1.5),
        .write_settle_t2t_ns = MS (0.1),
        .write_settle_ns = MS (0.6),
        .interface_bw = MBPS (600),
        .cache_bytes = MIB (128),
        .readahead_bytes = MIB (8),
        .faults = {.erc_ns = MS (7000)}, /* nearline: TLER 7 s */
    },
    {
        .name = "cmr-20t-2024",
        .description = "20 TB CMR nearline disk of 2024 (Exos X20 class)",
        .sourced = "20 TB, 285 MB/s outer, 256 MiB cache: Exos X20/X24 "
                   "(Blocks & Files 2023); 7200 rpm; 512e (X20/X24 ship as "
                   "512e or 4Kn); write seeks +0.1 ms track-to-track (HC310 "
                   "0.23/0.32 ms), +0.6 ms average (Ultrastar He10 8.0/8.6)",
        .estimated = "zone ratio 2.1 (mean 210 MB/s), 20 heads, seeks "
                     "0.5/8.0/16 ms, settle 1.5 ms (fits DiskSim's extracted "
                     "4 TB seek table), 8 MiB read-ahead, SATA 6 Gb/s bus",
        HDD_COMMON,
        HDD_QUEUE,
        .capacity = GB (20000),
        .design_capacity = GB (20000),
        .sector = 4096,
        .bandwidth = MBPS (210),
        .rpm = 7200,
        .zone_ratio = 2.1,
        .heads = 20,
        .seek_t2t_ns = MS (0.5),
        .seek_avg_ns = MS (8.0),
        .seek_full_ns = MS (16),
        .seek_settle_ns = MS (1.5),
        .write_settle_t2t_ns = MS (0.1),
        .write_settle_ns = MS (0.6),
        .interface_bw = MBPS (600),
        .cache_bytes = MIB (256),
        .readahead_bytes = MIB (8),
        .faults = {.erc_ns = MS (7000)},
    },
    {
        .name = "dual-18t-2022",
        .description = "18 TB dual-actuator nearline disk (Exos 2X18 class, "
                       "SATA)",
        .sourced = "18 TB, two actuators each owning half the LBAs, 554 MB/s "
                   "with both (Exos 2X18, Tom's Hardware 2022), 256 MB cache, "
                   "7200 rpm, QD16 random read 304 IOPS; SATA layout: Seagate "
                   "MACH.2 FAQ",
        .estimated = "277 MB/s outer per actuator and zone ratio 2.0 (mean "
                     "208 MB/s each), 18 heads, seeks and settle as "
                     "cmr-20t-2024, 8 MiB read-ahead, the cache split "
                     "between the actuators",
        HDD_COMMON,
        HDD_QUEUE,
        .capacity = GB (18000),
        .design_capacity = GB (18000),
        .sector = 4096,
        .bandwidth = MBPS (207.75),
        .rpm = 7200,
        .zone_ratio = 2.0,
        .heads = 18,
        .actuators = 2,
        .seek_t2t_ns = MS (0.5),
        .seek_avg_ns = MS (8.0),
        .seek_full_ns = MS (16),
        .seek_settle_ns = MS (1.5),
        .write_settle_t2t_ns = MS (0.1),
        .write_settle_ns = MS (0.6),
        .interface_bw = MBPS (600),
        .cache_bytes = MIB (256),
        .readahead_bytes = MIB (8),
        .faults = {.erc_ns = MS (7000)},
    },
    {
        .name = "hamr-30t-2024",
        .description = "30 TB HAMR nearline disk of 2024 (Exos M, Mozaic 3+)",
        .sourced = "30 TB on 10 platters, 275 MB/s outer (292 measured), "
                   "7200 rpm, 512 MB cache: Exos M, storagereview.com/fr/"
                   "review/seagate-exos-m-30tb-review-hamr-ing-storage-density",
        .estimated = "zone ratio 2.0 (inner 137.5, mean 206.25 MB/s), 20 "
                     "heads, seeks 0.3/8.0/16 ms, settle 1.5 ms (as "
                     "cmr-20t-2024) and write +0.6 ms (nearline "
                     "since 2012: Ultrastar He10 8.0/8.6 ms), 8 MiB "
                     "read-ahead, SATA 6 Gb/s bus",
        HDD_COMMON,
        HDD_QUEUE,
        .capacity = GB (30000),
        .design_capacity = GB (30000),
        .sector = 4096,
        .bandwidth = MBPS (206.25),
        .rpm = 7200,
        .zone_ratio = 2.0,
        .heads = 20,
        .seek_t2t_ns = MS (0.3),
        .seek_avg_ns = MS (8.0),
        .seek_full_ns = MS (16),
        .seek_settle_ns = MS (1.5),
        .write_settle_t2t_ns = MS (0.1),
        .write_settle_ns = MS (0.6),
        .interface_bw = MBPS (600),
        .cache_bytes = MIB (512),
        .readahead_bytes = MIB (8),
        .faults = {.erc_ns = MS (7000)},
    },
    {
        .name = "roadmap-2026",
        .description = "roadmap disk of 2026: 44 TB HAMR (Mozaic 4+ class)",
        .sourced = "44 TB on 10 platters, production H1 2026: Seagate "
                   "Mozaic 4+, techspot.com/news/111584-seagate-now-shipping-"
                   "hamr-disk-drives-holding-up.html",
        .estimated = "7200 rpm, outer 333 MB/s = 275 x sqrt(4.4/3 TB per "
                     "platter), zone ratio 2.0 (mean 249.75 MB/s), 20 heads, "
                     "seeks 0.3/8.0/16 ms, settle 1.5 ms (as cmr-20t-2024), "
                     "write +0.6 ms, 512 MiB cache, 8 MiB "
                     "read-ahead, SATA 6 Gb/s bus",
        HDD_COMMON,
        HDD_QUEUE,
        .capacity = GB (44000),
        .design_capacity = GB (44000),
        .sector = 4096,
        .bandwidth = MBPS (249.75),
        .rpm = 7200,
        .zone_ratio = 2.0,
        .heads = 20,
        .seek_t2t_ns = MS (0.3),
        .seek_avg_ns = MS (8.0),
        .seek_full_ns = MS (16),
        .seek_settle_ns = MS (1.5),
        .write_settle_t2t_ns = MS (0.1),
        .write_settle_ns = MS (0.6),
        .interface_bw = MBPS (600),
        .cache_bytes = MIB (512),
        .readahead_bytes = MIB (8),
        .faults = {.erc_ns = MS (7000)},
    },
    {
        .name = "roadmap-2028",
        .description = "roadmap disk of 2028: 60 TB (IRDS roadmap)",
        .sourced = "60 TB in 2028: IEEE IRDS mass-storage roadmap, venomo.us/"
                   "2024/10/04/60tb-hard-drives-arriving-in-2028-according-"
                   "to-industry-roadmap",
        .estimated = "10 platters x 6 TB, 7200 rpm, outer 389 MB/s = 275 x "
                     "sqrt(6/3), zone ratio 2.0 (mean 291.75 MB/s), 20 heads, "
                     "seeks 0.3/8.0/16 ms, settle 1.5 ms (as cmr-20t-2024), "
                     "write +0.6 ms, 1 GiB cache, 8 MiB "
                     "read-ahead, SATA 6 Gb/s bus",
        HDD_COMMON,
        HDD_QUEUE,
        .capacity = GB (60000),
        .design_capacity = GB (60000),
        .sector = 4096,
        .bandwidth = MBPS (291.75),
        .rpm = 7200,
        .zone_ratio = 2.0,
        .heads = 20,
        .seek_t2t_ns = MS (0.3),
        .seek_avg_ns = MS (8.0),
        .seek_full_ns = MS (16),
        .seek_settle_ns = MS (1.5),
        .write_settle_t2t_ns = MS (0.1),
        .write_settle_ns = MS (0.6),
        .interface_bw = MBPS (600),
        .cache_bytes = MIB (1024),
        .readahead_bytes = MIB (8),
        .faults = {.erc_ns = MS (7000)},
    },
    {
        .name = "roadmap-2030",
        .description = "roadmap disk of 2030: 70 TB, 315 MB/s, 8.0 ms",
        .sourced = "over 7 TB per platter in the early 2030s: epium.com/"
                   "news/seagate-hamr-6-9-tb-per-platter-55-tb-hdds; ~100 TB "
                   "by 2030: Seagate roadmap (2021), pipedot.org/5F4YR",
        .estimated = "70 TB = 10 platters x 7 TB, 7200 rpm, outer 420 MB/s = "
                     "275 x sqrt(7/3), zone ratio 2.0 (inner 210, mean 315 "
                     "MB/s), 20 heads, seeks 0.3/8.0/16 ms, settle 1.5 ms (as "
                     "cmr-20t-2024), write +0.6 ms, 1 "
                     "GiB cache, 8 MiB read-ahead, SATA 6 Gb/s bus",
        HDD_COMMON,
        HDD_QUEUE,
        .capacity = GB (70000),
        .design_capacity = GB (70000),
        .sector = 4096,
        .bandwidth = MBPS (315),
        .rpm = 7200,
        .zone_ratio = 2.0,
        .heads = 20,
        .seek_t2t_ns = MS (0.3),
        .seek_avg_ns = MS (8.0),
        .seek_full_ns = MS (16),
        .seek_settle_ns = MS (1.5),
        .write_settle_t2t_ns = MS (0.1),
        .write_settle_ns = MS (0.6),
        .interface_bw = MBPS (600),
        .cache_bytes = MIB (1024),
        .readahead_bytes = MIB (8),
        .faults = {.erc_ns = MS (7000)},
    },
    {
        .name = "roadmap-2030-100t",
        .description = "stretch roadmap disk of 2030: 100 TB, 375 MB/s",
        .sourced = "100 TB HAMR in 2029: Western Digital, chipp.in/hardware/"
                   "are-we-finally-going-to-see-100tb-hard-drives",
        .estimated = "10 platters x 10 TB, 7200 rpm, outer 500 MB/s ~ 275 x "
                     "sqrt(10/3) = 502, zone ratio 2.0 (inner 250, mean 375 "
                     "MB/s), 20 heads, seeks 0.3/8.0/16 ms, settle 1.5 ms (as "
                     "cmr-20t-2024), write +0.6 ms, 1 "
                     "GiB cache, 8 MiB read-ahead, SATA 6 Gb/s bus",
        HDD_COMMON,
        HDD_QUEUE,
        .capacity = GB (100000),
        .design_capacity = GB (100000),
        .sector = 4096,
        .bandwidth = MBPS (375),
        .rpm = 7200,
        .zone_ratio = 2.0,
        .heads = 20,
        .seek_t2t_ns = MS (0.3),
        .seek_avg_ns = MS (8.0),
        .seek_full_ns = MS (16),
        .seek_settle_ns = MS (1.5),
        .write_settle_t2t_ns = MS (0.1),
        .write_settle_ns = MS (0.6),
        .interface_bw = MBPS (600),
        .cache_bytes = MIB (1024),
        .readahead_bytes = MIB (8),
        .faults = {.erc_ns = MS (7000)},
    },
    {
        .name = "laptop-5400",
        .description = "1 TB 2.5-inch 5400 rpm laptop disk",
        .sourced = "5400 rpm, seeks 1.0/12/20 ms read, 1.1/13/21 ms write: "
                   "Hitachi Travelstar 5K160/5K320 specifications",
        .estimated = "1 TB, outer 130 MB/s and zone ratio 2.0 (mean 97.5 "
                     "MB/s), 4 heads, 4 KiB sectors shown as 512 B (512e), "
                     "settle 2.0 ms, 8 MiB cache, 1 MiB read-ahead, SATA 6 "
                     "Gb/s bus",
        HDD_COMMON,
        CONSUMER_QUEUE,
        .capacity = GB (1000),
        .design_capacity = GB (1000),
        .sector = 4096,
        .bandwidth = MBPS (97.5),
        .rpm = 5400,
        .zone_ratio = 2.0,
        .heads = 4,
        .seek_t2t_ns = MS (1.0),
        .seek_avg_ns = MS (12),
        .seek_full_ns = MS (20),
        .seek_settle_ns = MS (2.0),
        .write_settle_t2t_ns = MS (0.1),
        .write_settle_ns = MS (1.0),
        .interface_bw = MBPS (600),
        .cache_bytes = MIB (8),
        .readahead_bytes = MIB (1),
        .faults = {.erc_ns = MS (120000)}, /* desktop: 2 min */
    },
    /* The bandwidth is the Seagate Cheetah 15K.7's "sustainable disk
     * transfer rate", 122 to 204 MB/s (product manual 100516226, 4.2.3,
     * https://manualsdump.com/en/manuals/seagate-100516226model-st3300457ss-st3300657ss-st3300557ss-st336754lw-st3450857ss-st336607lw-st3450757ss-st3450657ss/136875/14).
     */
    {
        .name = "ent-15k",
        .description = "600 GB 15,000 rpm enterprise SAS disk",
        .sourced = "15000 rpm, average read seek 2.9 ms, write seek 3.1 ms: "
                   "Ultrastar 15K450 / C15K600 specifications; 600 GB, "
                   "sustained 204 MB/s outer, 122 MB/s inner (zone ratio "
                   "1.67, mean 163 MB/s): Seagate Cheetah 15K.7 SAS product "
                   "manual 100516226, 4.2.3",
        .estimated = "6 heads, 512 B sectors, seeks 0.2/6.5 ms, settle 0.6 "
                     "ms, write track-to-track 0.3 ms, 64 MiB cache, 2 MiB "
                     "read-ahead, SAS 6 Gb/s",
        HDD_COMMON,
        HDD_QUEUE,
        .capacity = GB (600),
        .design_capacity = GB (600),
        .sector = 512,
        .bandwidth = MBPS (163),
        .rpm = 15000,
        .zone_ratio = 204.0 / 122.0,
        .heads = 6,
        .seek_t2t_ns = MS (0.2),
        .seek_avg_ns = MS (2.9),
        .seek_full_ns = MS (6.5),
        .seek_settle_ns = MS (0.6),
        .write_settle_t2t_ns = MS (0.1),
        .write_settle_ns = MS (0.2),
        .interface_bw = MBPS (600),
        .cache_bytes = MIB (64),
        .readahead_bytes = MIB (2),
        .faults = {.erc_ns = MS (1193)}, /* SAS ladder: 298 revs */
    },
    /* Drive-managed shingled disks (smr.c).  Each one's CMR sibling is the
     * same profile with kind = hdd: same platters and arm, no shingles.
     */
    {
        .name = "smr-8t-2015",
        .description = "8 TB drive-managed SMR archive disk of 2015 (Seagate "
                       "Archive ST8000AS0002 class)",
        .sourced = "8 TB, 5900 rpm, 190 MB/s outer, 6 platters (12 heads), "
                   "128 MiB DRAM, ~20 GB media cache: Tom's Hardware IT "
                   "review; media cache log and band cleaning: Skylight "
                   "(FAST '15)",
        .estimated = "zone ratio 2.0 (mean 142.5 MB/s), seeks 1/8.5/17 ms, "
                     "30 MiB bands, logged below 256 KiB, cleaning after 1 s "
                     "idle, settle 1.5 ms, write seeks +0.1/+1 ms, 4 MiB "
                     "read-ahead, SATA 6 Gb/s, a desktop drive's 2 min error "
                     "recovery, reordering over 8 commands",
        .kind = FM_KIND_SMR,
        ROTATING_COMMON,
        CONSUMER_QUEUE,
        .capacity = GB (8000),
        .design_capacity = GB (8000),
        .sector = 4096,
        .bandwidth = MBPS (142.5),
        .rpm = 5900,
        .zone_ratio = 2.0,
        .heads = 12,
        .seek_t2t_ns = MS (1.0),
        .seek_avg_ns = MS (8.5),
        .seek_full_ns = MS (17),
        .seek_settle_ns = MS (1.5),
        .write_settle_t2t_ns = MS (0.1),
        .write_settle_ns = MS (1.0),
        .interface_bw = MBPS (600),
        .cache_bytes = MIB (128),
        .readahead_bytes = MIB (4),
        .smr_cache_bytes = GB (20),
        .smr_band_bytes = MIB (30),
        .smr_direct_bytes = 256 << 10,
        .smr_idle_ns = MS (1000),
        .faults = {.erc_ns = MS (120000)},
    },
    {
        .name = "smr-nas-2020",
        .description = "4 TB drive-managed SMR NAS disk of 2020 (WD Red "
                       "WD40EFAX class)",
        .sourced = "4 TB, 5400-class rpm, drive-managed SMR; rebuilds > 9 "
                   "days vs ~16 h CMR, 32 KiB sequential writes hit the "
                   "cliff, 512 KiB ones do not: ServeTheHome / Ars Technica "
                   "(2020); TLER 7 s",
        .estimated = "5400 rpm, 180 MB/s outer, zone ratio 2.0 (mean 135 "
                     "MB/s), 4 heads, seeks 1/9/18 ms, 256 MiB DRAM, 16 GiB "
                     "media cache (0.4 %), 30 MiB bands, logged below 256 "
                     "KiB, cleaning after 1 s idle, settle 1.5 ms, write "
                     "seeks +0.1/+1 ms, 4 MiB read-ahead, reordering over 8 "
                     "commands",
        .kind = FM_KIND_SMR,
        ROTATING_COMMON,
        CONSUMER_QUEUE,
        .capacity = GB (4000),
        .design_capacity = GB (4000),
        .sector = 4096,
        .bandwidth = MBPS (135),
        .rpm = 5400,
        .zone_ratio = 2.0,
        .heads = 4,
        .seek_t2t_ns = MS (1.0),
        .seek_avg_ns = MS (9.0),
        .seek_full_ns = MS (18),
        .seek_settle_ns = MS (1.5),
        .write_settle_t2t_ns = MS (0.1),
        .write_settle_ns = MS (1.0),
        .interface_bw = MBPS (600),
        .cache_bytes = MIB (256),
        .readahead_bytes = MIB (4),
        .smr_cache_bytes = MIB (16384),
        .smr_band_bytes = MIB (30),
        .smr_direct_bytes = 256 << 10,
        .smr_idle_ns = MS (1000),
        .faults = {.erc_ns = MS (7000)},
    },
    {
        .name = "ssd-sata",
        .description = "SATA flash SSD with power-loss protection",
        .sourced = "read latency 80 us, write 40 us, 550 MB/s read, 520 MB/s "
                   "write: ublk-disksim calibrations (870 EVO, PM883, PM9A3)",
        .estimated = "480 GB capacity, 4 KiB sectors, 20 us command overhead, "
                     "256 MiB DRAM cache",
        .kind = FM_KIND_SSD,
        .capacity = GB (480),
        .design_capacity = GB (480),
        .sector = 4096,
        .bandwidth = MBPS (550),
        .write_bandwidth = MBPS (520),
        .command_ns = MS (0.02),
        .read_latency_ns = MS (0.08),
        .write_latency_ns = MS (0.04),
        .interface_bw = MBPS (600),
        .cache_bytes = MIB (256),
        .faults = {.erc_ns = MS (1000)},
    },
    {
        .name = "ideal",
        .description = "a disk that takes no time: for benchmarks and tests",
        .sourced = "none",
        .estimated = "1 TiB default size (set size=), 4 KiB sectors",
        .kind = FM_KIND_SSD,
        .capacity = (uint64_t)1 << 40,
        .design_capacity = (uint64_t)1 << 40,
        .sector = 4096,
    },
};

#define N_BUILTINS (sizeof builtins / sizeof builtins[0])

const char *
fm_profile_builtin_name (size_t i)
{
  return i < N_BUILTINS ? builtins[i].name : NULL;
}

int
fm_profile_builtin (const char *name, struct fm_profile *out,
                    struct fm_err *err)
{
  char list[512] = "";
  size_t i;

  for (i = 0; i < N_BUILTINS; i++) {
    if (strcmp (builtins[i].name, name) == 0) {
      /* The table gives each disk's error recovery; the rest of its
       * fault settings are the quiet defaults.
       */
      *out = builtins[i];
      fm_faultset_defaults (&out->faults);
      if (builtins[i].faults.erc_ns)
        out->faults.erc_ns = builtins[i].faults.erc_ns;
      return 0;
    }
  }
  for (i = 0; i < N_BUILTINS; i++) {
    if (i > 0)
      strncat (list, ", ", sizeof list - strlen (list) - 1);
    strncat (list, builtins[i].name, sizeof list - strlen (list) - 1);
  }
  return fm_fail (err, "unknown profile '%s' (built-in profiles: %s)", name,
                  list);
}
