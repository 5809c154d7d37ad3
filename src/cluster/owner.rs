//! The owner's side of forwarding: the other nodes' commands for a room this node runs,
//! taken from the game's command subject and answered as the room answers its own.

use std::sync::Arc;

use futures_util::StreamExt;

use super::bus::Bus;
use super::wire::{Answer, Forward, to_bytes};
use crate::protocol::{ErrorCode, Refusal};
use crate::room::{Gone, RoomCmd, RoomHandle};

/// Answers commands for `room` until it stops taking them. Commands are answered one at
/// a time, so those from one node keep their order, as a local connection's do.
pub async fn serve(bus: Bus, room: RoomHandle) {
    let subject = bus.game_commands(&room.game_id);
    let mut commands = match bus.subscribe(subject).await {
        Ok(subscription) => subscription,
        Err(e) => {
            // The other nodes cannot reach this room: they take the game over once
            // this node's lease lapses, so stop owning it now.
            tracing::error!(game = %room.game_id, error = %e, "cannot take commands from other nodes; releasing the game");
            room.tell(RoomCmd::Release).await;
            return;
        }
    };
    loop {
        tokio::select! {
            message = commands.next() => {
                let Some(message) = message else { break };
                let Some(reply) = message.reply else { continue };
                let answer = match serde_json::from_slice::<Forward>(&message.payload) {
                    Ok(forward) => answer(&room, forward).await,
                    Err(e) => Answer::Refused(
                        Refusal::new(ErrorCode::BadRequest, format!("unreadable forward: {e}")).into(),
                    ),
                };
                if let Err(e) = bus.client().publish(reply, to_bytes(&answer)).await {
                    tracing::warn!(error = %e, "an answer to another node was not sent");
                }
            }
            () = room.closed() => break,
        }
    }
}

async fn answer(room: &RoomHandle, forward: Forward) -> Answer {
    let answered = match forward {
        Forward::Join {
            node,
            conn,
            user,
            since_seq,
        } => room
            .ask(|reply| RoomCmd::JoinRemote {
                node: Arc::from(node),
                conn,
                user,
                since_seq,
                reply,
            })
            .await
            .map(|joined| joined.map(|opening| Answer::Joined(opening.into()))),
        Forward::Leave { node, conn } => {
            room.tell(RoomCmd::LeaveRemote {
                node: Arc::from(node),
                conn,
            })
            .await;
            Ok(Ok(Answer::Done))
        }
        Forward::Act {
            user,
            action,
            lag_ms,
        } => room
            .ask(|reply| RoomCmd::Act {
                user,
                action,
                lag_ms,
                reply,
            })
            .await
            .map(|acted| acted.map(Answer::Seq)),
        Forward::Summary => room
            .ask(|reply| RoomCmd::Summary { reply })
            .await
            .map(|summary| Ok(Answer::Summary(summary))),
        Forward::Calls { user } => room
            .ask(|reply| RoomCmd::Calls { user, reply })
            .await
            .map(|calls| Ok(Answer::Calls(Box::new(calls)))),
        Forward::Vacation { user_id, away } => room
            .ask(|reply| RoomCmd::Vacation {
                user_id,
                away,
                reply,
            })
            .await
            .map(|told| Ok(Answer::Vacation(told))),
    };
    match answered {
        Ok(Ok(answer)) => answer,
        Ok(Err(refusal)) => Answer::Refused(refusal.into()),
        Err(Gone) => Answer::Gone,
    }
}
