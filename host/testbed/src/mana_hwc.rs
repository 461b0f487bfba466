//! The MANA control path on the host: the driver's HWC ([`rsnic_core::hwif::mana::hwc`]) and
//! probe steps ([`rsnic_core::hwif::mana::probe`]) against the simulated device, which is
//! reached only through BAR0 registers, DMA memory and interrupts. The host plays the
//! kernel glue: it runs the device where the kernel would sleep.
//!
//! ```
//! use rsnic_testbed::mana_hwc::HwcHost;
//! use rsnic_testbed::mana_pair::new_mana;
//! let mut h = HwcHost::new(new_mana(2));
//! let mut eqs = h.alloc_eqs(2);
//! h.probe(&mut eqs, 4096).unwrap();
//! assert_eq!(h.info.num_vports, 2);
//! ```

use std::cell::RefCell;
use std::rc::Rc;

use rsnic_core::hwif::hw::Coherent;
use rsnic_core::hwif::mana::cq::Eq;
use rsnic_core::hwif::mana::gdma_req::{self as req, Caller, DevId, MsgError};
use rsnic_core::hwif::mana::hwc::{GdmaRegs, Hwc, HwcBuffers, HwcError, HWC_MAX_MSG};
use rsnic_core::hwif::mana::probe::{
    Action, Probe, ProbeConfig, ProbeError, ProbeInfo, EQ_SIZE, MAX_VPORTS,
};

use crate::bus::IrqLog;
use crate::mana_pair::{HostMana, ManaBar, ManaEnv};
use crate::mem::{HostBuf, HostMemory};

/// Device runs a call waits at most (the kernel's timeout).
pub const MAX_ROUNDS: usize = 64;

/// The OS the host's probe reports in VERIFY_VF_DRIVER_VERSION: Linux 6.12.118.
pub const LINUX_6_12: req::OsInfo<'static> = req::OsInfo {
    major: 6,
    minor: 12,
    build: 118,
    sysname: b"Linux",
    release: b"6.12.118",
    version: b"#1 SMP",
};

/// A device-level caller: `dev_id`, activity 0 (REGISTER_DEVICE, DEREGISTER_DEVICE).
pub fn device_caller(dev_id: DevId) -> Caller {
    Caller {
        dev_id,
        activity_id: 0,
    }
}

/// Builds GDMA_DEREGISTER_DEVICE for `dev_id` into `b`.
pub fn deregister_device(b: &mut [u8], dev_id: DevId) -> Result<usize, MsgError> {
    req::general(
        b,
        req::GDMA_DEREGISTER_DEVICE,
        req::RESP_HDR_SIZE,
        device_caller(dev_id),
    )
}

/// Why a host-side call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallError {
    /// The channel refused or the status was a failure.
    Hwc(HwcError),
    /// The response was refused by the parser.
    Msg(MsgError),
    /// No response within [`MAX_ROUNDS`] device runs.
    Timeout,
}

/// The driver's control side of one device, with the device and memory.
pub struct HwcHost {
    /// DMA memory.
    pub mem: HostMemory,
    /// The device.
    pub dev: Rc<RefCell<HostMana>>,
    /// The register and DMA environment of the control path.
    pub env: ManaEnv,
    /// Interrupts raised while the control path ran the device.
    pub irqs: IrqLog,
    /// The channel.
    pub hwc: Hwc<HostBuf>,
    /// What the probe learnt.
    pub info: ProbeInfo,
    /// Probe steps that returned [`Action::Wait`].
    pub waits: usize,
    activity: u32,
}

impl HwcHost {
    /// Reads the registers and builds the channel over fresh buffers (nothing is sent).
    pub fn new(dev: HostMana) -> Self {
        let mem = HostMemory::new();
        let dev = Rc::new(RefCell::new(dev));
        let env = ManaEnv::new(&mem, ManaBar(dev.clone()), false);
        let regs = GdmaRegs::read(&env);
        let q = || mem.alloc(4096);
        let bufs = HwcBuffers {
            eq: q(),
            cq: q(),
            rq: q(),
            sq: q(),
            req: mem.alloc(HWC_MAX_MSG),
            resp: mem.alloc(HWC_MAX_MSG),
        };
        let hwc = Hwc::new(bufs, regs).expect("HWC buffers");
        Self {
            mem,
            dev,
            env,
            irqs: IrqLog::default(),
            hwc,
            info: ProbeInfo::default(),
            waits: 0,
            activity: 1000,
        }
    }

    /// EQ objects over `n` buffers of [`EQ_SIZE`] bytes (ids set by the probe).
    pub fn alloc_eqs(&self, n: usize) -> Vec<Eq<HostBuf>> {
        (0..n)
            .map(|_| Eq::new(self.mem.alloc(EQ_SIZE as usize), 0, EQ_SIZE / 16, 0).expect("EQ"))
            .collect()
    }

    /// Hands the latched register writes to the device and runs it until idle.
    pub fn run(&mut self) {
        self.env.flush_mmio();
        self.dev.borrow_mut().process(&self.mem, &mut self.irqs);
    }

    /// Drives the probe to the end: `Wait` runs the device. DMA region requests are at
    /// most `region_req` bytes (small values make them use ADD_PAGES).
    pub fn probe(&mut self, eqs: &mut [Eq<HostBuf>], region_req: usize) -> Result<(), ProbeError> {
        let mut s = vec![0u8; HWC_MAX_MSG];
        let mut p = Probe::new(ProbeConfig {
            msix: 64,
            max_vports: MAX_VPORTS,
            os: LINUX_6_12,
            max_region_request: region_req,
        });
        for _ in 0..10_000 {
            match p.step(&self.env, &mut self.hwc, eqs, &mut s) {
                Action::Wait => {
                    self.waits += 1;
                    self.run();
                }
                Action::Done => {
                    self.info = *p.info();
                    return Ok(());
                }
                Action::Failed(e) => return Err(e),
            }
        }
        panic!(
            "probe did not finish: stage {:?}, init {:?}, HWC {:?}, device {:?}",
            p.stage(),
            self.hwc.init(),
            self.hwc.stats,
            self.dev.borrow().hwc_counters()
        );
    }

    /// The caller of the next MANA request (fresh activity id).
    pub fn mana(&mut self) -> Caller {
        self.activity += 1;
        Caller {
            dev_id: self.info.mana,
            activity_id: self.activity,
        }
    }

    /// Sends `r` and waits for its response (running the device between polls).
    pub fn call(&mut self, r: &[u8]) -> Result<Vec<u8>, CallError> {
        let id = self.hwc.send(&self.env, r).map_err(CallError::Hwc)?;
        let mut out = vec![0u8; HWC_MAX_MSG];
        for _ in 0..MAX_ROUNDS {
            self.run();
            self.hwc.process_events(&self.env);
            if let Some(res) = self.hwc.take_response(&self.env, id, &mut out) {
                let n = res.map_err(CallError::Hwc)?;
                out.truncate(n);
                return Ok(out);
            }
        }
        self.hwc.abandon(&self.env, id);
        Err(CallError::Timeout)
    }

    /// Builds a request with `build` into a 4 KiB buffer and calls it.
    pub fn request(
        &mut self,
        build: impl FnOnce(&mut [u8]) -> Result<usize, MsgError>,
    ) -> Result<Vec<u8>, CallError> {
        let mut b = vec![0u8; HWC_MAX_MSG];
        let n = build(&mut b).map_err(CallError::Msg)?;
        self.call(&b[..n])
    }

    /// Registers `buf` as a DMA region (CREATE_DMA_REGION, then ADD_PAGES while pages are
    /// left when `max_req` bytes do not hold them all).
    pub fn region(&mut self, buf: &HostBuf, max_req: usize) -> Result<u64, CallError> {
        let len = buf.size() as u32;
        let mut b = vec![0u8; max_req];
        let (n, mut done) =
            req::create_dma_region(&mut b, buf.dma_addr(), len).map_err(CallError::Msg)?;
        let r = self.call(&b[..n])?;
        let h = req::parse_create_dma_region(&r).map_err(CallError::Msg)?;
        let pages = len / 4096;
        while done < pages {
            let (n, k) = req::dma_region_add_pages(&mut b, h, buf.dma_addr(), done, pages)
                .map_err(CallError::Msg)?;
            let r = self.call(&b[..n])?;
            req::parse_general(&r, req::GDMA_DMA_REGION_ADD_PAGES, None).map_err(CallError::Msg)?;
            done += k;
        }
        Ok(h)
    }

    /// CONFIG_VPORT_TX for vport `i` with the registered pdid and doorbell page.
    pub fn config_vport_tx(&mut self, i: usize) -> Result<req::VportTx, CallError> {
        let who = self.mana();
        let (vport, pdid, db) = (
            self.info.vports[i].vport,
            self.info.reg.pdid,
            self.info.reg.db_id,
        );
        let r = self.request(|b| req::config_vport_tx(b, who, vport, pdid, db))?;
        req::parse_config_vport_tx(&r, who).map_err(CallError::Msg)
    }

    /// CREATE_WQ_OBJ of `wq_type` on vport `i` over `wq` and `cq` (regions registered
    /// here), reporting to EQ `eq`.
    pub fn create_wq_obj(
        &mut self,
        i: usize,
        wq_type: u32,
        wq: &HostBuf,
        cq: &HostBuf,
        eq: u32,
    ) -> Result<req::WqObj, CallError> {
        let wr = self.region(wq, HWC_MAX_MSG)?;
        let cr = self.region(cq, HWC_MAX_MSG)?;
        let who = self.mana();
        let spec = self.wq_obj_spec(i, wq_type, (wr, wq), (cr, cq), eq);
        let r = self.request(|b| req::create_wq_obj(b, who, &spec))?;
        req::parse_create_wq_obj(&r, who).map_err(CallError::Msg)
    }

    /// The CREATE_WQ_OBJ fields for `wq_type` on vport `i`: the WQ and the CQ as (region
    /// handle, buffer), reporting to EQ `eq`, no moderation context.
    pub fn wq_obj_spec(
        &self,
        i: usize,
        wq_type: u32,
        (wq_region, wq): (u64, &HostBuf),
        (cq_region, cq): (u64, &HostBuf),
        eq: u32,
    ) -> req::WqObjSpec {
        req::WqObjSpec {
            vport: self.info.vports[i].vport,
            wq_type,
            wq_region,
            cq_region,
            wq_size: wq.size() as u32,
            cq_size: cq.size() as u32,
            cq_moderation_ctx_id: 0,
            cq_parent_eq: eq,
        }
    }

    /// A MANA request whose response is only the header.
    pub fn simple(
        &mut self,
        code: u32,
        build: impl FnOnce(&mut [u8], Caller) -> Result<usize, MsgError>,
    ) -> Result<(), CallError> {
        let who = self.mana();
        let r = self.request(|b| build(b, who))?;
        req::parse_general(&r, code, Some(who)).map_err(CallError::Msg)
    }

    /// MANA_CONFIG_VPORT_RX with RX and RSS on for `vport`: the hash key and indirection
    /// table are applied where `update_key` and `update_tab` say, and `default`, when given,
    /// becomes the default RX object.
    pub fn vport_rss(
        &mut self,
        vport: u64,
        key: &[u8; 40],
        tab: &[u64],
        default: Option<u64>,
        update_key: bool,
        update_tab: bool,
    ) -> Result<(), CallError> {
        let steer = req::RxSteer {
            vport,
            rx_enable: req::TRI_STATE_TRUE,
            rss_enable: req::TRI_STATE_TRUE,
            update_default_rxobj: default.is_some(),
            update_hashkey: update_key,
            update_indir_tab: update_tab,
            default_rxobj: default.unwrap_or(0),
            hashkey: key,
            indir_tab: tab,
        };
        self.simple(req::MANA_CONFIG_VPORT_RX, |b, who| {
            req::config_vport_rx(b, who, &steer)
        })
    }

    /// MANA_CONFIG_VPORT_RX turning RX off on `vport`, as `mana_dealloc_queues` does: RSS
    /// unknown, nothing updated, a zero hash key and an indirection table of `entries` zeros.
    pub fn vport_rx_off(&mut self, vport: u64, entries: usize) -> Result<(), CallError> {
        let key = [0u8; 40];
        let tab = vec![0u64; entries];
        let steer = req::RxSteer {
            vport,
            rx_enable: req::TRI_STATE_FALSE,
            rss_enable: req::TRI_STATE_UNKNOWN,
            update_default_rxobj: false,
            update_hashkey: false,
            update_indir_tab: false,
            default_rxobj: 0,
            hashkey: &key,
            indir_tab: &tab,
        };
        self.simple(req::MANA_CONFIG_VPORT_RX, |b, who| {
            req::config_vport_rx(b, who, &steer)
        })
    }
}
