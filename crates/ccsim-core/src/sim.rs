//! Placeholder: the engine is being written.
use crate::scenario::Spec;
use crate::{Error, RunOutput, SimulationError};
pub struct Simulator;
impl Simulator {
    pub fn build(_spec: &Spec) -> Result<Simulator, Error> {
        Err(Error::Simulation(SimulationError { message: "engine not built yet".into() }))
    }
    pub fn run(self) -> Result<RunOutput, Error> {
        unreachable!()
    }
}
