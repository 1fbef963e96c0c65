// SPDX-License-Identifier: MIT
//! The ATM result tables: `atm_vcs` (one row per ABR VC and per CBR source) and `atm_ports` (one
//! row per ATM link direction). Rates in bit/s of cells (cells/s · 424).

use super::cell::CELL_BITS;
use super::AtmFabric;
use crate::network::Network;
use crate::results::{Column, Table};

impl AtmFabric {
    /// One row per VC (kind "abr") and per CBR source (kind "cbr").
    pub fn vcs_table(&self) -> Table {
        let mut name = Vec::new();
        let mut kind = Vec::new();
        // A VC exists for the whole run: its start_s is NaN. A CBR source's is its first on
        // period, jittered when `start_jitter` asks (`crate::jitter`).
        let mut start_s = Vec::new();
        let mut f: [Vec<f64>; 3] = Default::default();
        let mut u: [Vec<u64>; 14] = Default::default();
        for v in &self.vcs {
            name.push(v.name.clone());
            kind.push("abr".to_string());
            start_s.push(f64::NAN);
            let s = &v.stats;
            for (c, x) in f
                .iter_mut()
                .zip([v.acr.acr, v.last_er, v.acr.icr].map(|r| r * CELL_BITS))
            {
                c.push(x);
            }
            for (c, x) in u.iter_mut().zip([
                s.frames_in,
                s.frames_refused,
                s.frames_delivered,
                s.frames_lost,
                s.data_cells_sent,
                s.frm_sent,
                s.brm_sent_in_rate,
                s.brm_sent_out_of_rate,
                s.brm_received,
                s.brm_ci_received,
                s.cells_delivered,
                s.cells_lost,
                s.rm_lost,
                s.max_source_cells,
            ]) {
                c.push(x);
            }
        }
        for c in &self.cbr {
            name.push(c.name.clone());
            kind.push("cbr".to_string());
            start_s.push(c.start.as_secs_f64());
            for (col, x) in f.iter_mut().zip([c.rate * CELL_BITS, f64::NAN, f64::NAN]) {
                col.push(x);
            }
            for (col, x) in
                u.iter_mut()
                    .zip([0, 0, 0, 0, c.sent, 0, 0, 0, 0, 0, c.delivered, c.lost, 0, 0])
            {
                col.push(x);
            }
        }
        let [acr, er, icr] = f;
        let names = [
            "frames_in",
            "frames_refused",
            "frames_delivered",
            "frames_lost",
            "cells_sent",
            "frm_sent",
            "brm_sent_in_rate",
            "brm_sent_out_of_rate",
            "brm_received",
            "brm_ci_received",
            "cells_delivered",
            "cells_lost",
            "rm_cells_lost",
            "max_source_cells",
        ];
        let mut columns = vec![
            ("name".to_string(), Column::Str(name)),
            ("kind".to_string(), Column::Str(kind)),
            ("start_s".to_string(), Column::F64(start_s)),
            ("acr_bps".to_string(), Column::F64(acr)),
            ("last_er_bps".to_string(), Column::F64(er)),
            ("icr_bps".to_string(), Column::F64(icr)),
        ];
        for (n, c) in names.iter().zip(u) {
            columns.push((n.to_string(), Column::U64(c)));
        }
        Table { columns }
    }

    /// One row per port.
    pub fn ports_table(&self, net: &Network) -> Table {
        let mut link = Vec::new();
        let mut dir = Vec::new();
        let mut u: [Vec<u64>; 11] = Default::default();
        let mut er_mean = Vec::new();
        for p in &self.ports {
            let ch = &net.chans[p.chan as usize];
            link.push(ch.link.clone());
            dir.push(ch.direction.to_string());
            let s = &p.stats;
            for (c, x) in u.iter_mut().zip([
                s.sent[0],
                s.sent[1],
                s.lost[0],
                s.lost[1],
                s.rm_sent,
                s.max_queue[0],
                s.max_queue[1],
                s.er_written,
                s.er_lowered,
                s.efci_marked,
                s.lost_link_down,
            ]) {
                c.push(x);
            }
            er_mean.push(if s.er_written > 0 {
                s.er_sum / s.er_written as f64 * CELL_BITS
            } else {
                f64::NAN
            });
        }
        let names = [
            "cbr_cells_sent",
            "abr_cells_sent",
            "cbr_cells_lost",
            "abr_cells_lost",
            "rm_cells_sent",
            "cbr_queue_max",
            "abr_queue_max",
            "er_written",
            "er_lowered",
            "efci_marked",
            "link_down_cells_lost",
        ];
        let mut columns = vec![
            ("link".to_string(), Column::Str(link)),
            ("direction".to_string(), Column::Str(dir)),
        ];
        for (n, c) in names.iter().zip(u) {
            columns.push((n.to_string(), Column::U64(c)));
        }
        columns.push(("er_mean_bps".to_string(), Column::F64(er_mean)));
        Table { columns }
    }
}
