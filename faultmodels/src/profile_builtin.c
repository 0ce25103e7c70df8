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
 *
 * A disk that differs from another in a few numbers says only those: it
 * names its base and gives the keys it overrides as the lines of a
 * profile file (PROFILES.md), which profile.c resolves as it does a file
 * with `base = NAME`.  So a built-in and a user's file inherit the same
 * way, and the parser's checks (known key, in range, set once) hold for
 * the built-ins too.  Each line must change its key: check-profile tests
 * that a derived disk equals its base in every other key.
 */
#include <stddef.h>
#include <string.h>

#include "builtin.h"

#define MS(x)   ((uint64_t)((x)*1e6 + 0.5))
#define MBPS(x) ((uint64_t)((x)*1e6 + 0.5))
#define MIB(x)  ((uint64_t)(x) << 20)
#define GB(x)   ((uint64_t)((x)*1e9 + 0.5))

/* Shared by every 7200 rpm disk unless it says otherwise [E]: the
 * controller overhead (0.1 ms, between ublk-disksim's 30 us and DiskSim's
 * Cheetah figures) and a 1 ms head switch (DiskSim 4 TB model).
 * ROTATING_COMMON is all of it but the kind: shingled disks share it.
 */
#define HDD_COMMON .p.kind = FM_KIND_HDD, ROTATING_COMMON
/* At most 128 dirty extents in the write cache [E]: DiskSim's models hold
 * 11 (WD 4 TB, 2013) to 128 (Maxtor Atlas 10K5) write segments
 * (https://github.com/westerndigitalcorporation/DiskSim), and a flush after
 * 64 scattered writes costs a consumer drive ~0.6 s (ublk-disksim's
 * measurement), so it held all 64.
 */
#define ROTATING_COMMON                                                        \
  .p.zones = 24, .p.command_ns = MS (0.1), .p.track_switch_ns = MS (1.0),      \
  .p.write_entries = 128

/* NCQ as SATA has it: 32 commands (Serial ATA 2.6, native command
 * queuing); the 500 ms age cap is ublk-disksim's documented assumption [E]
 * (https://github.com/lumir-sliva/ublk-disksim).  A nearline drive
 * reorders over the whole queue: QD32 random reads reach 2.5x QD1, as
 * the Exos X24 / HC580 datasheets' 168-212 IOPS against ~80 at QD1.
 */
#define HDD_QUEUE .p.queue_depth = 32, .p.queue_age_ns = MS (500)

/* A consumer drive holds 32 commands but gains far less from them: a
 * Seagate ST2000DM006 does 57.6 IOPS at QD1 and 93.6 at QD32, 1.6x
 * (ublk-disksim's measurement of a real drive).  A reordering window of
 * 8 reproduces that ratio [E].
 */
#define CONSUMER_QUEUE .p.queue_depth = 8, .p.queue_age_ns = MS (500)

static const struct builtin builtins[] = {
    {
        .p.name = "roadmap-2006",
        .p.description =
            "Seagate roadmap disk of 2006: 500 GB, 1000 Mb/s, 8 ms",
        .p.sourced = "capacity 500 GB, bandwidth 125 MB/s (1000 Mb/s), average "
                     "read seek 8.0 ms: Seagate roadmap via LWN 190222 (2006)",
        .p.estimated =
            "7200 rpm, zone ratio 2.0, 4 heads, 512 B sectors, seeks "
            "0.8/16 ms, settle 1.5 ms, write seeks 0.9/9.0 ms, 16 MiB "
            "cache, 1 MiB read-ahead, SATA 3 Gb/s bus",
        HDD_COMMON,
        HDD_QUEUE,
        .p.capacity = GB (500),
        .p.design_capacity = GB (500),
        .p.sector = 512,
        .p.bandwidth = MBPS (125),
        .p.rpm = 7200,
        .p.zone_ratio = 2.0,
        .p.heads = 4,
        .p.seek_t2t_ns = MS (0.8),
        .p.seek_avg_ns = MS (8.0),
        .p.seek_full_ns = MS (16),
        .p.seek_settle_ns = MS (1.5),
        .p.write_settle_t2t_ns = MS (0.1),
        .p.write_settle_ns = MS (1.0),
        .p.interface_bw = MBPS (300),
        .p.cache_bytes = MIB (16),
        .p.readahead_bytes = MIB (1),
        .p.faults.erc_ns = MS (120000), /* desktop: 2 min */
    },
    {
        .p.name = "roadmap-2009",
        .base = "roadmap-2006",
        .keys =
            "description = Seagate roadmap disk of 2009: 2 TB, 2000 Mb/s, "
            "7.2 ms\n"
            "sourced = capacity 2000 GB, bandwidth 250 MB/s (2000 Mb/s), "
            "average read seek 7.2 ms: Seagate roadmap via LWN 190222 (2006)\n"
            "estimated = 7200 rpm, zone ratio 2.0, 6 heads, 512 B sectors, "
            "seeks 0.7/14.5 ms, settle 1.4 ms, write seeks 0.8/8.0 ms, 32 "
            "MiB cache, 2 MiB read-ahead, SATA 6 Gb/s bus\n"
            "capacity = 2TB\n"
            "bandwidth_mbps = 250\n"
            "heads = 6\n"
            "seek_t2t_ms = 0.7\n"
            "seek_avg_ms = 7.2\n"
            "seek_full_ms = 14.5\n"
            "seek_settle_ms = 1.4\n"
            "write_settle_ms = 0.8\n"
            "interface_mbps = 600\n"
            "cache = 32MiB\n"
            "readahead = 2MiB\n",
    },
    {
        .p.name = "roadmap-2013",
        .base = "roadmap-2009",
        .keys =
            "description = Seagate roadmap disk of 2013: 8 TB, 5000 Mb/s, "
            "6.5 ms\n"
            "sourced = capacity 8000 GB, bandwidth 625 MB/s (5000 Mb/s), "
            "average read seek 6.5 ms: Seagate roadmap via LWN 190222 (2006)\n"
            "estimated = 7200 rpm, zone ratio 2.0, 8 heads, 4 KiB sectors "
            "shown as 512 B (512e), seeks 0.6/13 ms, settle 1.2 ms, write "
            "seeks 0.7/7.1 ms, 64 MiB cache, 4 MiB read-ahead, unlimited bus "
            "(the 833 MB/s outer zone exceeds SATA 6 Gb/s)\n"
            "capacity = 8TB\n"
            "sector = 4096\n"
            "bandwidth_mbps = 625\n"
            "heads = 8\n"
            "seek_t2t_ms = 0.6\n"
            "seek_avg_ms = 6.5\n"
            "seek_full_ms = 13\n"
            "seek_settle_ms = 1.2\n"
            "write_settle_ms = 0.6\n"
            "interface_mbps = 0\n"
            "cache = 64MiB\n"
            "readahead = 4MiB\n",
    },
    {
        .p.name = "cmr-8t-2015",
        .base = "cmr-20t-2024",
        .keys =
            "description = 8 TB CMR disk as shipped in 2015: the 2013 "
            "roadmap capacity at a quarter of its bandwidth\n"
            "sourced = 8 TB drives arrived in 2014-15 at ~200 MB/s outer "
            "(HGST He8 at 205 MB/s, weak secondary source); 128 MiB cache "
            "typical of 2015; write seeks +0.1 ms track-to-track (Ultrastar "
            "DC HC310 0.23/0.32 ms), +0.6 ms average (Ultrastar He10 8.0/8.6 "
            "ms)\n"
            "estimated = 7200 rpm, outer 200 MB/s and zone ratio 2.0 (mean "
            "150 MB/s), 14 heads, 512e, seeks 0.6/8.0/16 ms, settle 1.5 ms "
            "(fits DiskSim's extracted 4 TB seek table), 8 MiB read-ahead, "
            "SATA 6 Gb/s bus, no media cache\n"
            "capacity = 8TB\n"
            "bandwidth_mbps = 150\n"
            "zone_ratio = 2.0\n"
            "heads = 14\n"
            "seek_t2t_ms = 0.6\n"
            "cache = 128MiB\n"
            "media_cache_entries = 0\n",
    },
    {
        .p.name = "cmr-20t-2024",
        .p.description = "20 TB CMR nearline disk of 2024 (Exos X20 class)",
        .p.sourced = "20 TB, 285 MB/s outer, 256 MiB cache: Exos X20/X24 "
                     "(Blocks & Files 2023); 7200 rpm; 512e (X20/X24 ship as "
                     "512e or 4Kn); write seeks +0.1 ms track-to-track (HC310 "
                     "0.23/0.32 ms), +0.6 ms average (Ultrastar He10 8.0/8.6); "
                     "a media cache: 4K QD16 random writes with the cache off "
                     "550 IOPS against 168 reads (Exos X24 datasheet DS2080, "
                     "seagate.com)",
        .p.estimated = "zone ratio 2.1 (mean 210 MB/s), 20 heads, seeks "
                       "0.5/8.0/16 ms, settle 1.5 ms (fits DiskSim's extracted "
                       "4 TB seek table), 8 MiB read-ahead, SATA 6 Gb/s bus; "
                       "128 dirty extents in the write cache (DiskSim's models "
                       "hold 11 to 128 write segments); a media cache of "
                       "65536 extents, a staged write 1.7 ms (fitted to the "
                       "550 IOPS)",
        HDD_COMMON,
        HDD_QUEUE,
        .p.capacity = GB (20000),
        .p.design_capacity = GB (20000),
        .p.sector = 4096,
        .p.bandwidth = MBPS (210),
        .p.rpm = 7200,
        .p.zone_ratio = 2.1,
        .p.heads = 20,
        .p.seek_t2t_ns = MS (0.5),
        .p.seek_avg_ns = MS (8.0),
        .p.seek_full_ns = MS (16),
        .p.seek_settle_ns = MS (1.5),
        .p.write_settle_t2t_ns = MS (0.1),
        .p.write_settle_ns = MS (0.6),
        .p.interface_bw = MBPS (600),
        .p.cache_bytes = MIB (256),
        .p.readahead_bytes = MIB (8),
        .p.media_cache_entries = 65536,
        .p.media_cache_ns = MS (1.7),
        .p.faults.erc_ns = MS (7000),
    },
    {
        .p.name = "dual-18t-2022",
        .base = "cmr-20t-2024",
        .keys =
            "description = 18 TB dual-actuator nearline disk (Exos 2X18 "
            "class, SATA)\n"
            "sourced = 18 TB, two actuators each owning half the LBAs, 554 "
            "MB/s with both (Exos 2X18, Tom's Hardware 2022), 256 MB cache, "
            "7200 rpm, QD16 random read 304 IOPS; SATA layout: Seagate "
            "MACH.2 FAQ\n"
            "estimated = 277 MB/s outer per actuator and zone ratio 2.0 "
            "(mean 208 MB/s each), 18 heads, seeks and settle as "
            "cmr-20t-2024, 8 MiB read-ahead, the cache split between the "
            "actuators; a staged write 3.45 ms per actuator (fitted to the "
            "560 IOPS)\n"
            "capacity = 18TB\n"
            "bandwidth_mbps = 207.75\n"
            "zone_ratio = 2.0\n"
            "heads = 18\n"
            "actuators = 2\n"
            "media_cache_ms = 3.45\n",
    },
    {
        .p.name = "hamr-30t-2024",
        .base = "cmr-20t-2024",
        .keys =
            "description = 30 TB HAMR nearline disk of 2024 (Exos M, Mozaic "
            "3+)\n"
            "sourced = 30 TB on 10 platters, 275 MB/s outer (292 measured), "
            "7200 rpm, 512 MB cache: Exos M, "
            "storagereview.com/fr/review/"
            "seagate-exos-m-30tb-review-hamr-ing-storage-density; 4K QD16 "
            "random writes with the cache off 350 IOPS (Exos M datasheet "
            "DS2045, seagate.com)\n"
            "estimated = zone ratio 2.0 (inner 137.5, mean 206.25 MB/s), 20 "
            "heads, seeks 0.3/8.0/16 ms, settle 1.5 ms (as cmr-20t-2024) and "
            "write +0.6 ms (nearline since 2012: Ultrastar He10 8.0/8.6 ms), "
            "8 MiB read-ahead, SATA 6 Gb/s bus, a staged write 2.75 ms "
            "(fitted to the 350 IOPS)\n"
            "capacity = 30TB\n"
            "bandwidth_mbps = 206.25\n"
            "zone_ratio = 2.0\n"
            "seek_t2t_ms = 0.3\n"
            "cache = 512MiB\n"
            "media_cache_ms = 2.75\n",
    },
    {
        .p.name = "roadmap-2026",
        .base = "hamr-30t-2024",
        .keys =
            "description = roadmap disk of 2026: 44 TB HAMR (Mozaic 4+ class)\n"
            "sourced = 44 TB on 10 platters, production H1 2026: Seagate "
            "Mozaic 4+, "
            "techspot.com/news/"
            "111584-seagate-now-shipping-hamr-disk-drives-holding-up.html\n"
            "estimated = 7200 rpm, outer 333 MB/s = 275 x sqrt(4.4/3 TB per "
            "platter), zone ratio 2.0 (mean 249.75 MB/s), 20 heads, seeks "
            "0.3/8.0/16 ms, settle 1.5 ms (as cmr-20t-2024), write +0.6 ms, "
            "512 MiB cache, 8 MiB read-ahead, SATA 6 Gb/s bus\n"
            "capacity = 44TB\n"
            "bandwidth_mbps = 249.75\n",
    },
    {
        .p.name = "roadmap-2028",
        .base = "roadmap-2026",
        .keys =
            "description = roadmap disk of 2028: 60 TB (IRDS roadmap)\n"
            "sourced = 60 TB in 2028: IEEE IRDS mass-storage roadmap, "
            "venomo.us/2024/10/04/"
            "60tb-hard-drives-arriving-in-2028-according-to-industry-roadmap\n"
            "estimated = 10 platters x 6 TB, 7200 rpm, outer 389 MB/s = 275 "
            "x sqrt(6/3), zone ratio 2.0 (mean 291.75 MB/s), 20 heads, seeks "
            "0.3/8.0/16 ms, settle 1.5 ms (as cmr-20t-2024), write +0.6 ms, "
            "1 GiB cache, 8 MiB read-ahead, SATA 6 Gb/s bus\n"
            "capacity = 60TB\n"
            "bandwidth_mbps = 291.75\n"
            "cache = 1GiB\n",
    },
    {
        .p.name = "roadmap-2030",
        .base = "roadmap-2028",
        .keys =
            "description = roadmap disk of 2030: 70 TB, 315 MB/s, 8.0 ms\n"
            "sourced = over 7 TB per platter in the early 2030s: "
            "epium.com/news/seagate-hamr-6-9-tb-per-platter-55-tb-hdds; ~100 "
            "TB by 2030: Seagate roadmap (2021), pipedot.org/5F4YR\n"
            "estimated = 70 TB = 10 platters x 7 TB, 7200 rpm, outer 420 "
            "MB/s = 275 x sqrt(7/3), zone ratio 2.0 (inner 210, mean 315 "
            "MB/s), 20 heads, seeks 0.3/8.0/16 ms, settle 1.5 ms (as "
            "cmr-20t-2024), write +0.6 ms, 1 GiB cache, 8 MiB read-ahead, "
            "SATA 6 Gb/s bus\n"
            "capacity = 70TB\n"
            "bandwidth_mbps = 315\n",
    },
    {
        .p.name = "roadmap-2030-100t",
        .base = "roadmap-2030",
        .keys =
            "description = stretch roadmap disk of 2030: 100 TB, 375 MB/s\n"
            "sourced = 100 TB HAMR in 2029: Western Digital, "
            "chipp.in/hardware/are-we-finally-going-to-see-100tb-hard-drives\n"
            "estimated = 10 platters x 10 TB, 7200 rpm, outer 500 MB/s ~ 275 "
            "x sqrt(10/3) = 502, zone ratio 2.0 (inner 250, mean 375 MB/s), "
            "20 heads, seeks 0.3/8.0/16 ms, settle 1.5 ms (as cmr-20t-2024), "
            "write +0.6 ms, 1 GiB cache, 8 MiB read-ahead, SATA 6 Gb/s bus\n"
            "capacity = 100TB\n"
            "bandwidth_mbps = 375\n",
    },
    /* A consumer drive: it reorders over 8 commands (CONSUMER_QUEUE). */
    {
        .p.name = "laptop-5400",
        .base = "roadmap-2006",
        .keys =
            "description = 1 TB 2.5-inch 5400 rpm laptop disk\n"
            "sourced = 5400 rpm, seeks 1.0/12/20 ms read, 1.1/13/21 ms "
            "write: Hitachi Travelstar 5K160/5K320 specifications\n"
            "estimated = 1 TB, outer 130 MB/s and zone ratio 2.0 (mean 97.5 "
            "MB/s), 4 heads, 4 KiB sectors shown as 512 B (512e), settle 2.0 "
            "ms, 8 MiB cache, 1 MiB read-ahead, SATA 6 Gb/s bus\n"
            "capacity = 1TB\n"
            "sector = 4096\n"
            "bandwidth_mbps = 97.5\n"
            "rpm = 5400\n"
            "seek_t2t_ms = 1.0\n"
            "seek_avg_ms = 12\n"
            "seek_full_ms = 20\n"
            "seek_settle_ms = 2.0\n"
            "interface_mbps = 600\n"
            "cache = 8MiB\n"
            "queue_depth = 8\n",
    },
    /* The bandwidth is the Seagate Cheetah 15K.7's "sustainable disk
     * transfer rate", 122 to 204 MB/s (product manual 100516226, 4.2.3,
     * https://manualsdump.com/en/manuals/seagate-100516226model-st3300457ss-st3300657ss-st3300557ss-st336754lw-st3450857ss-st336607lw-st3450757ss-st3450657ss/136875/14).
     */
    {
        .p.name = "ent-15k",
        .p.description = "600 GB 15,000 rpm enterprise SAS disk",
        .p.sourced = "15000 rpm, average read seek 2.9 ms, write seek 3.1 ms: "
                     "Ultrastar 15K450 / C15K600 specifications; 600 GB, "
                     "sustained 204 MB/s outer, 122 MB/s inner (zone ratio "
                     "1.67, mean 163 MB/s): Seagate Cheetah 15K.7 SAS product "
                     "manual 100516226, 4.2.3",
        .p.estimated = "6 heads, 512 B sectors, seeks 0.2/6.5 ms, settle 0.6 "
                       "ms, write track-to-track 0.3 ms, 64 MiB cache, 2 MiB "
                       "read-ahead, SAS 6 Gb/s",
        HDD_COMMON,
        HDD_QUEUE,
        .p.capacity = GB (600),
        .p.design_capacity = GB (600),
        .p.sector = 512,
        .p.bandwidth = MBPS (163),
        .p.rpm = 15000,
        .p.zone_ratio = 204.0 / 122.0,
        .p.heads = 6,
        .p.seek_t2t_ns = MS (0.2),
        .p.seek_avg_ns = MS (2.9),
        .p.seek_full_ns = MS (6.5),
        .p.seek_settle_ns = MS (0.6),
        .p.write_settle_t2t_ns = MS (0.1),
        .p.write_settle_ns = MS (0.2),
        .p.interface_bw = MBPS (600),
        .p.cache_bytes = MIB (64),
        .p.readahead_bytes = MIB (2),
        .p.faults.erc_ns = MS (1193), /* SAS ladder: 298 revs */
    },
    /* Drive-managed shingled disks (smr.c).  Each one's CMR sibling is the
     * same profile with kind = hdd: same platters and arm, no shingles.
     */
    {
        .p.name = "smr-8t-2015",
        .p.description = "8 TB drive-managed SMR archive disk of 2015 (Seagate "
                         "Archive ST8000AS0002 class)",
        .p.sourced = "8 TB, 5900 rpm, 190 MB/s outer, 6 platters (12 heads), "
                     "128 MiB DRAM, ~20 GB media cache: Tom's Hardware IT "
                     "review; media cache log and band cleaning: Skylight "
                     "(FAST '15)",
        .p.estimated = "zone ratio 2.0 (mean 142.5 MB/s), seeks 1/8.5/17 ms, "
                       "30 MiB bands, logged below 256 KiB, cleaning after 1 s "
                       "idle, settle 1.5 ms, write seeks +0.1/+1 ms, 4 MiB "
                       "read-ahead, SATA 6 Gb/s, a desktop drive's 2 min error "
                       "recovery, reordering over 8 commands",
        .p.kind = FM_KIND_SMR,
        ROTATING_COMMON,
        CONSUMER_QUEUE,
        .p.capacity = GB (8000),
        .p.design_capacity = GB (8000),
        .p.sector = 4096,
        .p.bandwidth = MBPS (142.5),
        .p.rpm = 5900,
        .p.zone_ratio = 2.0,
        .p.heads = 12,
        .p.seek_t2t_ns = MS (1.0),
        .p.seek_avg_ns = MS (8.5),
        .p.seek_full_ns = MS (17),
        .p.seek_settle_ns = MS (1.5),
        .p.write_settle_t2t_ns = MS (0.1),
        .p.write_settle_ns = MS (1.0),
        .p.interface_bw = MBPS (600),
        .p.cache_bytes = MIB (128),
        .p.readahead_bytes = MIB (4),
        .p.smr_cache_bytes = GB (20),
        .p.smr_band_bytes = MIB (30),
        .p.smr_direct_bytes = 256 << 10,
        .p.smr_idle_ns = MS (1000),
        .p.faults.erc_ns = MS (120000),
    },
    {
        .p.name = "smr-nas-2020",
        .base = "smr-8t-2015",
        .keys =
            "description = 4 TB drive-managed SMR NAS disk of 2020 (WD Red "
            "WD40EFAX class)\n"
            "sourced = 4 TB, 5400-class rpm, drive-managed SMR; rebuilds > 9 "
            "days vs ~16 h CMR, 32 KiB sequential writes hit the cliff, 512 "
            "KiB ones do not: ServeTheHome / Ars Technica (2020); TLER 7 s\n"
            "estimated = 5400 rpm, 180 MB/s outer, zone ratio 2.0 (mean 135 "
            "MB/s), 4 heads, seeks 1/9/18 ms, 256 MiB DRAM, 16 GiB media "
            "cache (0.4 %), 30 MiB bands, logged below 256 KiB, cleaning "
            "after 1 s idle, settle 1.5 ms, write seeks +0.1/+1 ms, 4 MiB "
            "read-ahead, reordering over 8 commands\n"
            "capacity = 4TB\n"
            "bandwidth_mbps = 135\n"
            "rpm = 5400\n"
            "heads = 4\n"
            "seek_avg_ms = 9.0\n"
            "seek_full_ms = 18\n"
            "cache = 256MiB\n"
            "smr_cache = 16GiB\n"
            "erc = 7s\n",
    },
    {
        .p.name = "ssd-sata",
        .p.description = "SATA flash SSD with power-loss protection",
        .p.sourced = "read latency 80 us, write 40 us, "
                     "550 MB/s read, 520 MB/s "
                     "write: ublk-disksim calibrations "
                     "(870 EVO, PM883, PM9A3)",
        .p.estimated = "480 GB capacity, 4 KiB sectors, 20 us "
                       "command overhead, "
                       "256 MiB DRAM cache",
        .p.kind = FM_KIND_SSD,
        .p.capacity = GB (480),
        .p.design_capacity = GB (480),
        .p.sector = 4096,
        .p.bandwidth = MBPS (550),
        .p.write_bandwidth = MBPS (520),
        .p.command_ns = MS (0.02),
        .p.read_latency_ns = MS (0.08),
        .p.write_latency_ns = MS (0.04),
        .p.interface_bw = MBPS (600),
        .p.cache_bytes = MIB (256),
        .p.faults.erc_ns = MS (1000),
    },
    {
        .p.name = "ideal",
        .p.description = "a disk that takes no time: "
                         "for benchmarks and tests",
        .p.sourced = "none",
        .p.estimated = "1 TiB default size (set "
                       "size=), 4 KiB sectors",
        .p.kind = FM_KIND_SSD,
        .p.capacity = (uint64_t)1 << 40,
        .p.design_capacity = (uint64_t)1 << 40,
        .p.sector = 4096,
    },
};

#define N_BUILTINS (sizeof builtins / sizeof builtins[0])

const char *
fm_profile_builtin_name (size_t i)
{
  return i < N_BUILTINS ? builtins[i].p.name : NULL;
}

const char *
fm_profile_builtin_base (size_t i, const char **keys)
{
  if (i >= N_BUILTINS)
    return NULL;
  *keys = builtins[i].keys;
  return builtins[i].base;
}

const struct builtin *
fm_builtin_find (const char *name)
{
  size_t i;

  for (i = 0; i < N_BUILTINS; i++)
    if (strcmp (builtins[i].p.name, name) == 0)
      return &builtins[i];
  return NULL;
}
