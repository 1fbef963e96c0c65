// SPDX-License-Identifier: MIT
//! The ABR end systems of TM 4.0 §5.10 (af-tm-0056.000): the source's allowed cell rate (ACR)
//! and when it sends an RM cell, and the destination's turn-around (in `Cell::turned_around`).
//!
//! ```text
//!   source buffer (cells of queued frames) ──one in-rate cell every 1/ACR──> first port
//!        every Nrm-th in-rate cell is an FRM (rule 3a) ─────────────────────> ... ─> destination
//!   ACR <── BRM (rules 8, 9: CI, NI, ER) <── switches lower ER (ERICA) <── turned around FRM
//! ```
//!
//! Rules implemented, numbered as TM 4.0's source rules:
//! - 1: cells leave at most at ACR, and MCR ≤ ACR ≤ PCR always;
//! - 2: ACR starts at ICR (itself at most TBE/FRTT) and the first in-rate cell is an FRM;
//! - 3a-c: at each slot an FRM if `n ≥ Nrm − 1` (or `n ≥ Mrm` and Trm has passed), else a
//!   waiting BRM if none was sent since the last FRM or no data waits, else a data cell; every
//!   in-rate cell counts towards n, in-rate BRMs included (rule 3a as written);
//! - 5: use-it-or-lose-it: an FRM sent more than ADTF after the previous one resets ACR to ICR
//!   if ACR was above it;
//! - 6: after CRM FRMs without a returning BRM, each FRM cuts ACR by ACR·CDF;
//! - 8, 9: a BRM with CI cuts ACR by ACR·RDF, one without CI or NI raises it by RIF·PCR, then
//!   ACR = max(MCR, min(ACR, ER)); a BRM with BN = 0 clears the unacknowledged count;
//! - 11 (in part): while ACR is below TCR only FRMs leave, out of rate, one per 1/TCR, so
//!   feedback keeps flowing when MCR is 0.
//!
//! Not implemented: rule 13's optional further reductions and rule 3's "more than one BRM per
//! FRM" corner. Out-of-rate BRMs (destination rule 3c, at most TCR) are an option of the
//! fabric (`out_of_rate_brm`); a destination without a reverse ABR VC sends its BRMs at once
//! (`docs/atm.md`).

use crate::time::{SimDuration, SimTime};

/// The ABR parameters of a VC (TM 4.0 §5.10.2, Table 5-5), rates in cells/s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbrParams {
    pub pcr: f64,
    pub mcr: f64,
    pub icr: f64,
    pub tcr: f64,
    pub nrm: u32,
    pub mrm: u32,
    pub trm: SimDuration,
    pub rif: f64,
    pub rdf: f64,
    pub cdf: f64,
    pub adtf: SimDuration,
    /// Transient buffer exposure, cells.
    pub tbe: u64,
    /// Cells the source buffer holds (the paper's "user buffer"); a frame that does not fit is
    /// lost whole.
    pub source_buffer: u64,
    /// The destination may send a turned-around RM cell out of rate, at most one per 1/TCR,
    /// instead of waiting for an in-rate slot of the reverse source (TM 4.0 §5.10.5
    /// destination rule 3c; `docs/atm.md`).
    pub out_of_rate_brm: bool,
}

impl AbrParams {
    /// The CRM of §5.10.2: FRMs sent without a BRM before rule 6 cuts ACR, ceil(TBE/Nrm).
    pub fn crm(&self) -> u64 {
        self.tbe.div_ceil(self.nrm as u64)
    }

    /// ICR for a connection of fixed round-trip time `frtt`: at most TBE/FRTT, so the first
    /// round trip cannot put more than TBE cells into the network (§5.10.2).
    pub fn icr_for(&self, frtt: SimDuration) -> f64 {
        let frtt = frtt.as_secs_f64();
        if frtt > 0.0 {
            self.icr.min(self.tbe as f64 / frtt)
        } else {
            self.icr
        }
    }
}

/// The fields of a BRM that the source reads.
#[derive(Clone, Copy, Debug)]
pub struct Feedback {
    pub ci: bool,
    pub ni: bool,
    pub er: f64,
    pub bn: bool,
}

/// A source's rate state: ACR and what rules 3, 5 and 6 count.
#[derive(Clone, Debug)]
pub struct AcrState {
    pub p: AbrParams,
    /// ICR of this connection (after the TBE/FRTT limit).
    pub icr: f64,
    pub acr: f64,
    /// In-rate cells since the last in-rate FRM.
    pub n_since_frm: u32,
    pub t_last_frm: Option<SimTime>,
    /// FRMs sent since the last BRM with BN = 0.
    pub unack: u64,
    /// A BRM was sent since the last FRM (rule 3b).
    pub brm_since_frm: bool,
}

/// What the next in-rate slot carries (rule 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotChoice {
    Frm,
    Brm,
    Data,
    Nothing,
}

impl AcrState {
    pub fn new(p: AbrParams, icr: f64) -> AcrState {
        let icr = icr.clamp(p.mcr, p.pcr);
        AcrState {
            p,
            icr,
            acr: icr,
            n_since_frm: 0,
            t_last_frm: None,
            unack: 0,
            brm_since_frm: false,
        }
    }

    /// Rule 3: what to send now, given whether a BRM and a data cell wait.
    pub fn choose(&self, now: SimTime, brm_waiting: bool, data_waiting: bool) -> SlotChoice {
        if !brm_waiting && !data_waiting {
            return SlotChoice::Nothing;
        }
        let trm_due = self.n_since_frm >= self.p.mrm
            && self
                .t_last_frm
                .is_some_and(|t| now.saturating_since(t) >= self.p.trm);
        if self.t_last_frm.is_none() || self.n_since_frm + 1 >= self.p.nrm || trm_due {
            SlotChoice::Frm
        } else if brm_waiting && (!self.brm_since_frm || !data_waiting) {
            SlotChoice::Brm
        } else if data_waiting {
            SlotChoice::Data
        } else {
            SlotChoice::Brm
        }
    }

    /// Rules 5-7: an FRM leaves now; returns the CCR it carries.
    pub fn on_send_frm(&mut self, now: SimTime) -> f64 {
        if let Some(t) = self.t_last_frm {
            if self.acr > self.icr && now.saturating_since(t) > self.p.adtf {
                self.acr = self.icr;
            }
        }
        if self.unack >= self.p.crm() {
            self.acr = (self.acr - self.acr * self.p.cdf).max(self.p.mcr);
        }
        self.unack += 1;
        self.n_since_frm = 0;
        self.brm_since_frm = false;
        self.t_last_frm = Some(now);
        self.acr
    }

    /// An in-rate data cell or BRM left (rule 3a counts both).
    pub fn on_send_other(&mut self, brm: bool) {
        self.n_since_frm += 1;
        if brm {
            self.brm_since_frm = true;
        }
    }

    /// Rules 8 and 9: a BRM for this VC arrived.
    pub fn on_brm(&mut self, f: Feedback) {
        let p = &self.p;
        if f.ci {
            self.acr = (self.acr - self.acr * p.rdf).max(p.mcr);
        } else if !f.ni {
            self.acr = (self.acr + p.rif * p.pcr).min(p.pcr);
        }
        self.acr = self.acr.min(f.er).max(p.mcr);
        if !f.bn {
            self.unack = 0;
        }
    }

    /// Rule 1's spacing: the gap before the next in-rate cell (rule 11: at TCR while ACR is
    /// below it).
    pub fn gap(&self) -> SimDuration {
        let rate = self.acr.max(self.p.tcr).max(1e-3);
        SimDuration::from_nanos((1e9 / rate).ceil() as u64)
    }

    /// Rule 11: below TCR only out-of-rate FRMs leave.
    pub fn out_of_rate(&self) -> bool {
        self.acr < self.p.tcr
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// TM 4.0's defaults with a PCR of 10,000 cells/s.
    pub(crate) fn tm4() -> AbrParams {
        AbrParams {
            pcr: 10_000.0,
            mcr: 0.0,
            icr: 10_000.0,
            tcr: 10.0,
            nrm: 32,
            mrm: 2,
            trm: SimDuration::from_millis(100),
            rif: 1.0 / 16.0,
            rdf: 1.0 / 16.0,
            cdf: 1.0 / 16.0,
            adtf: SimDuration::from_millis(500),
            tbe: 16_777_215,
            source_buffer: 1_000_000,
            out_of_rate_brm: false,
        }
    }

    fn fb(ci: bool, ni: bool, er: f64) -> Feedback {
        Feedback {
            ci,
            ni,
            er,
            bn: false,
        }
    }

    #[test]
    fn crm_is_tbe_over_nrm_and_icr_is_held_to_tbe_over_frtt() {
        // Check 4.
        let p = tm4();
        assert_eq!(p.crm(), 524_288);
        assert_eq!(AbrParams { tbe: 512, ..p }.crm(), 16);
        let frtt = SimDuration::from_millis(100);
        assert!(p.icr_for(frtt) <= p.tbe as f64 / frtt.as_secs_f64());
        let small = AbrParams { tbe: 100, ..p };
        assert_eq!(small.icr_for(frtt), 1000.0);
    }

    #[test]
    fn under_backlog_every_32nd_in_rate_cell_is_an_frm() {
        // Check 5: 31 data cells between FRMs.
        let mut s = AcrState::new(tm4(), 10_000.0);
        let mut t = SimTime::ZERO;
        let mut kinds = Vec::new();
        for _ in 0..96 {
            let c = s.choose(t, false, true);
            match c {
                SlotChoice::Frm => {
                    s.on_send_frm(t);
                }
                _ => s.on_send_other(false),
            }
            kinds.push(c);
            t += s.gap();
        }
        let frms: Vec<usize> = (0..96).filter(|&i| kinds[i] == SlotChoice::Frm).collect();
        assert_eq!(frms, vec![0, 32, 64]);
    }

    #[test]
    fn in_rate_brms_count_towards_the_next_frm() {
        let mut s = AcrState::new(tm4(), 10_000.0);
        s.on_send_frm(SimTime::ZERO);
        for _ in 0..30 {
            s.on_send_other(false);
        }
        s.on_send_other(true);
        assert_eq!(
            s.choose(SimTime::from_millis(1), true, true),
            SlotChoice::Frm
        );
    }

    #[test]
    fn a_brm_with_ci_cuts_acr_by_rdf_then_er_caps_it() {
        // Check 6.
        let mut s = AcrState::new(tm4(), 1600.0);
        s.on_brm(fb(true, false, 1e9));
        assert_eq!(s.acr, 1500.0);
        s.on_brm(fb(true, false, 700.0));
        assert_eq!(s.acr, 700.0);
        // The paper's RDF = 1 sends ACR to MCR.
        let mut paper = AcrState::new(
            AbrParams {
                rdf: 1.0,
                mcr: 50.0,
                ..tm4()
            },
            1600.0,
        );
        paper.on_brm(fb(true, false, 1e9));
        assert_eq!(paper.acr, 50.0);
    }

    #[test]
    fn a_brm_without_ci_or_ni_raises_acr_by_rif_pcr_up_to_pcr_and_er() {
        // Check 7.
        let mut s = AcrState::new(tm4(), 1000.0);
        s.on_brm(fb(false, false, 1e9));
        assert_eq!(s.acr, 1625.0);
        s.on_brm(fb(false, false, 1700.0));
        assert_eq!(s.acr, 1700.0);
        let mut paper = AcrState::new(AbrParams { rif: 1.0, ..tm4() }, 1000.0);
        paper.on_brm(fb(false, false, 1e9));
        assert_eq!(paper.acr, 10_000.0, "RIF = 1 lifts ACR to PCR");
    }

    #[test]
    fn a_brm_with_ni_does_not_raise_acr_but_er_still_caps_it() {
        // Check 8.
        let mut s = AcrState::new(tm4(), 1000.0);
        s.on_brm(fb(false, true, 1e9));
        assert_eq!(s.acr, 1000.0);
        s.on_brm(fb(false, true, 400.0));
        assert_eq!(s.acr, 400.0);
    }

    #[test]
    fn acr_never_leaves_mcr_to_pcr_and_cells_are_spaced_by_one_over_acr() {
        // Check 9, over a mixed sequence of feedback.
        let p = AbrParams {
            mcr: 100.0,
            ..tm4()
        };
        let mut s = AcrState::new(p, 2000.0);
        let mut x = 12345u64;
        for _ in 0..10_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let er = ((x >> 20) % 20_000) as f64;
            s.on_brm(fb(x & 1 == 0, x & 2 == 0, er));
            assert!(s.acr >= p.mcr && s.acr <= p.pcr, "{}", s.acr);
            assert!(s.gap().as_secs_f64() >= 1.0 / s.acr - 1e-12);
        }
    }

    #[test]
    fn an_frm_after_more_than_adtf_idle_carries_icr() {
        // Check 10.
        let mut s = AcrState::new(tm4(), 1000.0);
        s.on_send_frm(SimTime::ZERO);
        s.on_brm(fb(false, false, 1e9));
        assert!(s.acr > 1000.0);
        let ccr = s.on_send_frm(SimTime::from_millis(501));
        assert_eq!(ccr, 1000.0);
    }

    #[test]
    fn without_returning_brms_acr_falls_by_cdf_per_frm_after_crm_frms() {
        // Check 11, with TBE = 512 (CRM = 16).
        let mut s = AcrState::new(AbrParams { tbe: 512, ..tm4() }, 8000.0);
        let mut t = SimTime::ZERO;
        for _ in 0..16 {
            assert_eq!(s.on_send_frm(t), 8000.0);
            t += SimDuration::from_millis(1);
        }
        assert_eq!(s.on_send_frm(t), 7500.0);
        t += SimDuration::from_millis(1);
        assert_eq!(s.on_send_frm(t), 7500.0 * 15.0 / 16.0);
        // A BRM with BN = 0 clears the count.
        s.on_brm(fb(false, true, 1e9));
        let before = s.acr;
        assert_eq!(s.on_send_frm(t + SimDuration::from_millis(1)), before);
    }
}
